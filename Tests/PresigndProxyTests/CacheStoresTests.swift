import PresigndCache
import PresigndConfig
import PresigndTestSupport
import Testing

@testable import PresigndProxy

@Suite struct CacheStoresTests {
    let scratch: TemporaryDirectory
    init() throws { scratch = try TemporaryDirectory() }

    func directory(_ name: String, maxSize: Int = 1 << 30) -> CacheDirectory {
        CacheDirectory(path: scratch.path + "/" + name, maxSize: maxSize)
    }

    @Test func opensEveryDirectoryOnce() throws {
        let stores = CacheStores()
        let prepared = try stores.prepare([directory("a"), directory("b")])
        #expect(prepared.opened.count == 2)
        #expect(stores.current.stores.isEmpty)  // nothing runs before commit
        #expect(stores.commit(prepared).isEmpty)
        #expect(Set(stores.current.stores.keys) == [directory("a").path, directory("b").path])
    }

    @Test func aReloadKeepsTheStoreOfADirectoryThatStaysAndAppliesItsNewCap() throws {
        let stores = CacheStores()
        _ = stores.commit(try stores.prepare([directory("a", maxSize: 1 << 30)]))
        let before = try #require(stores.current[directory("a").path])
        let prepared = try stores.prepare([directory("a", maxSize: 1 << 20)])
        #expect(prepared.opened.isEmpty)
        #expect(before.maxSize == 1 << 30)  // applied at commit, not before
        #expect(stores.commit(prepared).isEmpty)
        #expect(stores.current[directory("a").path] === before)
        #expect(before.maxSize == 1 << 20)
    }

    @Test func aDirectoryNoLongerNamedIsClosedOnceNothingHoldsIt() throws {
        let stores = CacheStores()
        _ = stores.commit(try stores.prepare([directory("a")]))
        _ = stores.commit(try stores.prepare([]))
        #expect(stores.current.stores.isEmpty)
        // Closed: its lock is free for another owner (`presignd cache`, another daemon).
        _ = try SliceStore(directory: directory("a").path, maxSize: 1 << 20)
    }

    @Test func aRetiredStoreStillHeldIsTakenBackNotOpenedTwice() throws {
        let stores = CacheStores()
        _ = stores.commit(try stores.prepare([directory("a")]))
        let held = try #require(stores.current[directory("a").path])  // a worker's old settings
        _ = stores.commit(try stores.prepare([]))
        let prepared = try stores.prepare([directory("a")])
        #expect(prepared.opened.isEmpty)
        _ = stores.commit(prepared)
        #expect(stores.current[directory("a").path] === held)
    }

    @Test func aDirectoryAnotherOwnerHoldsFailsThePreparationAndChangesNothing() throws {
        let stores = CacheStores()
        _ = stores.commit(try stores.prepare([directory("a")]))
        let other = try SliceStore(directory: directory("b").path, maxSize: 1 << 20)
        #expect(throws: StartupError.self) { try stores.prepare([directory("a"), directory("b")]) }
        do {
            _ = try stores.prepare([directory("b")])
            Issue.record("a locked directory was opened")
        } catch {
            #expect(error.description.contains("cannot open cache directory \(directory("b").path)"))
            #expect(error.description.contains("in use by another process"))
        }
        #expect(Set(stores.current.stores.keys) == [directory("a").path])
        _ = other
    }
}
