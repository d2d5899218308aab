import PresigndSigV4
import PresigndSync
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The slice store of one cache directory (issue 23 §2, §7): one file per slice, an in-memory index of present
/// slices rebuilt by the integrity check on open, S3-FIFO eviction by slice under `maxSize`. Shared by every
/// worker (and every bucket naming the directory); one process owns the directory at a time (`lock`).
///
/// On disk: `objects/<2 hex>/<key>/meta` (identity and stored answer) and `<version tag>-<index>` slice files,
/// each complete: a slice is written as `tmp-*`, synced, then renamed (write, then mark present).
public final class SliceStore: Sendable {
    public let directory: String
    /// `max_size` of the directory (changed by `resize`).
    public var maxSize: Int { state.withLock { $0.eviction.capacity } }
    public let metrics: CacheMetrics
    /// Filled slices on their way to the disk (`submitSlice`).
    public let writes: SliceWriteQueue
    /// Misses waiting for another request's fill (single-flight).
    public let flights = FillFlights()
    /// Fills cutting slices now (`takeFillPermit`).
    let fillsCutting = Atomic<Int>(0)
    private let lockDescriptor: Int32
    let state: Locked<State>

    struct Entry: Sendable {
        var meta: ObjectMeta
        var versionTag: String
        var present: Set<Int>
    }

    struct State: Sendable {
        var entries: [CacheKey: Entry]
        var eviction: SliceEviction<SliceID>
        /// Small present slices kept open, so a hit does not open them by path.
        var descriptors = SliceDescriptors(capacity: SliceStore.keptDescriptors)
        var missing: [CacheKey: (name: ObjectName, until: Int)] = [:]
        var temporaryCounter = 0
        /// Files renamed out of the way under the lock, to unlink after it (`emptyTrash`).
        var trash: [String] = []
        /// Invalidations so far, by key bucket, and of many objects at once (`InvalidationMark`).
        var invalidated = [Int](repeating: 0, count: SliceStore.invalidationBuckets)
        var bulkInvalidations = 0

        func mark(_ key: CacheKey) -> InvalidationMark {
            InvalidationMark(bulk: bulkInvalidations, bucket: invalidated[key.bucket(SliceStore.invalidationBuckets)])
        }
    }

    static let invalidationBuckets = 1024
    /// How many slice descriptors a store keeps open at most (`SliceDescriptors`).
    public static let keptDescriptors = 256

    /// Where invalidation stood for a name when a read was sent (`invalidationMark`): its answer is stored only
    /// if no write dropped the name (or a bucket of names sharing its counter) meanwhile, so a read racing a
    /// write never stores the old object after the write's answer.
    /// `key`: `SliceStore.key(name)`, when the caller has it already (so for every method that takes one).
    public func invalidationMark(_ name: ObjectName, key: CacheKey? = nil) -> InvalidationMark? {
        guard let key = key ?? (try? Self.key(name)) else { return nil }
        return state.withLock { $0.mark(key) }
    }

    /// Opens (creating it if needed) and checks the directory; its parent must exist. Fails with
    /// `directoryLocked` when another process holds it.
    public init(directory: String, maxSize: Int, metrics: CacheMetrics = CacheMetrics()) throws(CacheError) {
        self.directory = directory
        self.metrics = metrics
        self.writes = SliceWriteQueue(budget: Self.writeBudget)
        try FileSystem.makeDirectory(directory)
        lockDescriptor = try FileSystem.lockDirectory(directory)
        do {
            try FileSystem.makeDirectory(directory + "/objects")
            let (entries, report) = try Self.scan(directory + "/objects")
            var state = State(entries: entries, eviction: SliceEviction(capacity: maxSize))
            // A smaller max_size than last time evicts at once.
            for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
                for index in entry.present.sorted() {
                    let size = entry.meta.layout.bytes(ofSlice: index).count
                    let victims = state.eviction.insert(SliceID(key: key, index: index), size: size)
                    try Self.drop(victims, in: &state, root: directory + "/objects")
                }
            }
            self.state = Locked(state)
            self.integrity = report
        } catch {
            FileSystem.close(lockDescriptor)
            throw error
        }
        emptyTrash()
        metrics.setSize(state.withLock { $0.eviction.totalSize })
    }

    /// Applies a reloaded `max_size` to the open store (a reload keeps the store of a directory that stays: the
    /// directory's lock belongs to it), evicting at once when it shrank.
    public func resize(maxSize: Int) throws(CacheError) {
        let root = objectsRoot
        let evicted = try state.withLock { (state) throws(CacheError) -> Int in
            let victims = state.eviction.resize(capacity: maxSize)
            try Self.drop(victims, in: &state, root: root)
            return victims.count
        }
        emptyTrash()
        metrics.countEvictions(evicted)
        metrics.setSize(state.withLock { $0.eviction.totalSize })
    }

    /// What the check on open removed.
    public let integrity: IntegrityReport

    deinit {
        state.withLock { $0.descriptors.closeAll() }
        FileSystem.close(lockDescriptor)
    }

    /// The entry for `name`, if the store holds one: the full name is compared, not only its hash.
    public func lookup(_ name: ObjectName, key: CacheKey? = nil) throws(CacheError) -> CachedObject? {
        let key = try Self.key(name, given: key)
        return state.withLock { state in
            guard let entry = state.entries[key], entry.meta.identity.name == name else { return nil }
            return Self.cached(entry)
        }
    }

    /// Records an object (a cacheable upstream answer) before its slices are written. The same version keeps its
    /// slices; another version (or size) replaces the entry and drops every old slice first.
    /// `unlessInvalidatedSince`: fails with `objectChanged` when a write dropped the name after that mark.
    /// `metaOnWriteQueue`: the entry is recorded in memory now and its `meta` written (synced, renamed) on the
    /// write queue, ahead of the slices a fill queues after it, and old files are unlinked there too: an event
    /// loop recording a miss does no disk I/O (a fill's slices still reach the disk only after their `meta`).
    @discardableResult
    public func store(
        _ identity: ObjectIdentity, stored: StoredResponse, sliceSize: Int, now: Int,
        unlessInvalidatedSince mark: InvalidationMark? = nil, metaOnWriteQueue: Bool = false, key: CacheKey? = nil
    ) throws(CacheError) -> CachedObject {
        let key = try Self.key(identity.name, given: key)
        let tag = try Self.versionTag(identity.version)
        let root = objectsRoot
        defer {
            if metaOnWriteQueue { afterWrites { [self] in emptyTrash() } } else { emptyTrash() }
        }
        return try state.withLock { (state) throws(CacheError) -> CachedObject in
            if let mark, state.mark(key) != mark { throw .objectChanged }
            state.missing[key] = nil
            if let entry = state.entries[key], entry.meta.identity == identity,
                entry.meta.stored.objectSize == stored.objectSize
            {
                return Self.cached(entry)
            }
            try Self.remove(key, in: &state, root: root, keepDirectory: true)
            let meta = ObjectMeta(
                identity: identity, stored: stored, sliceSize: sliceSize, storedAt: now, validatedAt: now)
            if metaOnWriteQueue {
                state.temporaryCounter += 1
                let counter = state.temporaryCounter
                afterWrites { [self] in writeQueuedMeta(meta, key: key, counter: counter) }
            } else {
                try Self.writeMeta(meta, key: key, root: root, counter: &state.temporaryCounter)
            }
            let entry = Entry(meta: meta, versionTag: tag, present: [])
            state.entries[key] = entry
            return Self.cached(entry)
        }
    }

    /// A 304 (or the same ETag) confirmed the stored version at `now`. Kept in memory only: after a restart the
    /// older time on disk makes the next use revalidate sooner, never later.
    public func markValidated(_ identity: ObjectIdentity, at now: Int) throws(CacheError) {
        let key = try Self.key(identity.name)
        state.withLock { state in
            if state.entries[key]?.meta.identity == identity { state.entries[key]?.meta.validatedAt = now }
        }
    }

    /// What the store holds, of the objects whose name `matches` (all by default).
    public func statistics(matching: (ObjectName) -> Bool = { _ in true }) -> StoreStatistics {
        state.withLock { state in
            var statistics = StoreStatistics(capacity: state.eviction.capacity)
            for entry in state.entries.values where matching(entry.meta.identity.name) {
                statistics.objects += 1
                statistics.slices += entry.present.count
                statistics.bytes += entry.present.reduce(0) { $0 + entry.meta.layout.bytes(ofSlice: $1).count }
            }
            return statistics
        }
    }

    var objectsRoot: String { directory + "/objects" }

    /// How many slice descriptors the store keeps open now (`SliceDescriptors`).
    public var keptDescriptorCount: Int { state.withLock { $0.descriptors.count } }

    /// `given` when the caller computed it already, else `key(name)`.
    static func key(_ name: ObjectName, given: CacheKey?) throws(CacheError) -> CacheKey {
        if let given { return given }
        return try key(name)
    }

    /// Where `name`'s entry lives (its SHA-256): computed once per request by a caller that asks several times.
    public static func key(_ name: ObjectName) throws(CacheError) -> CacheKey {
        do { return try CacheKey(name) } catch { throw .hashing("\(error)") }
    }

    static func versionTag(_ version: ObjectVersion) throws(CacheError) -> String {
        do { return try CacheKey.versionTag(version) } catch { throw .hashing("\(error)") }
    }

    static func cached(_ entry: Entry) -> CachedObject {
        CachedObject(
            identity: entry.meta.identity, stored: entry.meta.stored, layout: entry.meta.layout,
            validatedAt: entry.meta.validatedAt, present: entry.present)
    }

    static func objectDirectory(_ key: CacheKey, root: String) -> String { root + "/" + key.shard + "/" + key.hex }

    static func slicePath(_ key: CacheKey, tag: String, index: Int, root: String) -> String {
        objectDirectory(key, root: root) + "/" + tag + "-" + String(index)
    }

    /// Writes `meta` as a temporary file, syncs it, renames it over `meta`: readers see the old or the new file.
    /// A `meta` queued by `store(metaOnWriteQueue:)`, written unless the entry was replaced or dropped since.
    func writeQueuedMeta(_ meta: ObjectMeta, key: CacheKey, counter: Int) {
        guard state.withLock({ $0.entries[key]?.meta.identity == meta.identity }) else { return }
        var counter = counter
        do throws(CacheError) {
            try Self.writeMeta(meta, key: key, root: objectsRoot, counter: &counter)
        } catch {
            metrics.countWriteFailure()  // its slices are dropped by the next start's check: never served wrong
        }
    }

    static func writeMeta(_ meta: ObjectMeta, key: CacheKey, root: String, counter: inout Int) throws(CacheError) {
        try FileSystem.makeDirectory(root + "/" + key.shard)
        let directory = objectDirectory(key, root: root)
        try FileSystem.makeDirectory(directory)
        counter += 1
        let temporary = directory + "/tmp-meta-" + String(getpid()) + "-" + String(counter)
        let descriptor = try FileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL)
        do throws(CacheError) {
            defer { FileSystem.close(descriptor) }
            try FileSystem.withBytes(meta.encoded) { (raw) throws(CacheError) in
                try FileSystem.writeAll(descriptor, raw, path: temporary)
            }
            try FileSystem.fdatasync(descriptor, path: temporary)
            try FileSystem.rename(temporary, directory + "/meta")
        } catch {
            try? FileSystem.unlink(temporary)
            throw error
        }
    }
}

/// A point in a store's invalidations (`SliceStore.invalidationMark`).
public struct InvalidationMark: Sendable, Equatable {
    var bulk: Int
    var bucket: Int
}
