import PresigndCache
import PresigndConfig

/// The open slice stores by directory, as the workers see them: immutable, part of `ProxySettings`; a reload
/// hands the workers a new one.
struct CacheStoreMap: Sendable {
    var stores: [String: SliceStore] = [:]

    subscript(directory: String) -> SliceStore? { stores[directory] }
}

/// The daemon's slice stores (issue 23): one per cache directory, opened before the workers start and shared by
/// them. A reload keeps the store of a directory that stays (a new `max_size` applied with `resize`), opens the
/// new ones and lets go of those no bucket names any more (closed, lock released, when the last worker's old
/// settings let go of them). Main thread only.
final class CacheStores {
    private(set) var current = CacheStoreMap()
    /// Stores a reload stopped naming that something may still hold (a worker's old settings, an answer in
    /// progress): a later reload naming the directory again takes the same store back, since opening it a second
    /// time would find the directory locked by this very process.
    private var retired: [String: Retired] = [:]

    private final class Retired {
        weak var store: SliceStore?
        init(_ store: SliceStore) { self.store = store }
    }

    /// What a (re)load will run with, opened but not applied: dropping it closes what it opened.
    struct Prepared {
        var map: CacheStoreMap
        var resizes: [(store: SliceStore, maxSize: Int)]
        /// Directories opened by this preparation, for the log.
        var opened: [SliceStore]
    }

    /// Opens the directories not open yet; the running stores are not changed. A directory that cannot be opened
    /// (locked by another process, not creatable) fails the whole preparation.
    func prepare(_ directories: [CacheDirectory]) throws(StartupError) -> Prepared {
        var prepared = Prepared(map: CacheStoreMap(), resizes: [], opened: [])
        for directory in directories {
            if let store = current[directory.path] ?? retired[directory.path]?.store {
                prepared.map.stores[directory.path] = store
                if store.maxSize != directory.maxSize { prepared.resizes.append((store, directory.maxSize)) }
                continue
            }
            do {
                let store = try SliceStore(directory: directory.path, maxSize: directory.maxSize)
                prepared.map.stores[directory.path] = store
                prepared.opened.append(store)
            } catch {
                throw .cache(directory: directory.path, reason: error.description)
            }
        }
        return prepared
    }

    /// Makes `prepared` the running set: new caps applied (a smaller one evicts at once), stores no longer named
    /// retired. Returns the directories whose resize failed, with the reason (the store keeps serving).
    func commit(_ prepared: Prepared) -> [(directory: String, reason: String)] {
        var failures: [(directory: String, reason: String)] = []
        for (store, maxSize) in prepared.resizes {
            do {
                try store.resize(maxSize: maxSize)
            } catch {
                failures.append((store.directory, error.description))
            }
        }
        for (path, store) in current.stores where prepared.map[path] == nil { retired[path] = Retired(store) }
        for path in prepared.map.stores.keys { retired[path] = nil }
        retired = retired.filter { $0.value.store != nil }
        current = prepared.map
        return failures
    }
}
