import Foundation
import PresigndCache
import Testing

/// The slice store on disk: write then mark present, replacement, invalidation, eviction, reads.
@Suite struct SliceStoreTests {
    private let photo = ObjectIdentity(name: objectName("cat.jpg"), version: ObjectVersion(etag: "\"v1\""))

    @Test func writtenSlicesAreServedWithTheirBytesAndTheLastIsShort() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let entry = try store.fill(photo, size: 3 * 65536 + 10, sliceSize: 65536, seed: 1)
        #expect(entry.presentSlices == [0, 1, 2, 3])
        #expect(try store.read(photo, index: 3, within: 0..<entry.layout.objectSize) == pattern(1, 196_608..<196_618))
        // A range inside slice 1: offset and length within the slice file.
        guard let slice = try store.openSlice(photo, index: 1, within: 70000..<70100) else {
            Issue.record("slice 1 is not present")
            return
        }
        #expect(slice.offset == 70000 - 65536 && slice.length == 100)
        #expect(try slice.read() == pattern(1, 70000..<70100))
        let statistics = store.statistics()
        #expect(statistics.objects == 1 && statistics.slices == 4 && statistics.bytes == 3 * 65536 + 10)
        #expect(store.metrics.snapshot.size == statistics.bytes)
    }

    @Test func aSliceIsNotPresentUntilCommitted() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.store(photo, stored: StoredResponse(objectSize: 65536, headers: [:]), sliceSize: 65536, now: 0)
        let writer = try store.beginSlice(photo, index: 0)
        try writer.append(pattern(1, 0..<1000))
        #expect(try store.read(photo, index: 0, within: 0..<65536) == nil)
        // Waiters read the partial file up to what is written.
        #expect(try writer.openPartial().read() == pattern(1, 0..<1000))
        // A short slice is refused at commit and leaves nothing.
        #expect(throws: CacheError.sliceOutOfRange(index: 0)) { try store.commit(writer) }
        #expect(try store.lookup(photo.name)?.presentSlices == [])
        #expect(throws: CacheError.sliceOutOfRange(index: 0)) {
            try store.beginSlice(photo, index: 0).append(pattern(1, 0..<65537))
        }
    }

    @Test func lookupComparesTheWholeName() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 100, sliceSize: 65536, seed: 1)
        #expect(try store.lookup(photo.name)?.identity == photo)
        #expect(try store.lookup(objectName("cat.jpg", bucket: "other")) == nil)
        let other = ObjectIdentity(name: objectName("cat.jpg", bucket: "other"), version: photo.version)
        #expect(try store.read(other, index: 0, within: 0..<100) == nil)
    }

    @Test func aNewVersionDropsTheOldSlicesAndNeverMixesThem() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 4 * 65536, sliceSize: 65536, seed: 1)
        let v2 = ObjectIdentity(name: photo.name, version: ObjectVersion(etag: "\"v2\""))
        // A fill of v1 under way when v2 replaces it.
        try store.invalidate(photo.name)
        _ = try store.fill(photo, size: 4 * 65536, sliceSize: 65536, seed: 1, slices: [])
        let late = try store.beginSlice(photo, index: 0)
        try late.append(pattern(1, 0..<65536))
        let replaced = try store.fill(v2, size: 4 * 65536, sliceSize: 65536, seed: 2, slices: [1])
        #expect(replaced.identity == v2 && replaced.presentSlices == [1])
        #expect(throws: CacheError.objectChanged) { try store.commit(late) }
        #expect(try store.lookup(photo.name)?.presentSlices == [1])
        #expect(try store.read(photo, index: 1, within: 0..<65536 * 4) == nil)
        #expect(try store.read(v2, index: 1, within: 0..<65536 * 4) == pattern(2, 65536..<131_072))
        #expect(throws: CacheError.objectChanged) { try store.beginSlice(photo, index: 0) }
    }

    @Test func theSameVersionKeepsItsSlices() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 100, sliceSize: 65536, seed: 1)
        let again = try store.store(
            photo, stored: StoredResponse(objectSize: 100, headers: ["ETag": "\"v1\""]), sliceSize: 65536, now: 5)
        #expect(again.presentSlices == [0])
        try store.markValidated(photo, at: 9000)
        #expect(try store.lookup(photo.name)?.validatedAt == 9000)
    }

    @Test func invalidatesAKeyAndAPrefix() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let names = ["a/1", "a/2", "b/1"].map {
            ObjectIdentity(name: objectName($0), version: ObjectVersion(etag: "\"e\""))
        }
        let elsewhere = ObjectIdentity(name: objectName("a/3", bucket: "c"), version: ObjectVersion(etag: "\"e\""))
        for identity in names + [elsewhere] { _ = try store.fill(identity, size: 10, sliceSize: 65536, seed: 1) }
        #expect(try store.invalidate(names[2].name) == 1)
        #expect(try store.invalidate(names[2].name) == 0)
        #expect(try store.invalidate(upstream: "u", bucket: "b", keyPrefix: "a/") == 2)
        #expect(try store.lookup(elsewhere.name) != nil)
        #expect(store.statistics().objects == 1)
        #expect(try store.invalidate(upstream: nil, bucket: nil, keyPrefix: "") == 1)
        #expect(store.statistics() == StoreStatistics(objects: 0, slices: 0, bytes: 0, capacity: 1 << 30))
        let shards = try FileManager.default.contentsOfDirectory(atPath: scratch.directory + "/objects")
        let leftovers = try shards.flatMap {
            try FileManager.default.contentsOfDirectory(atPath: scratch.directory + "/objects/" + $0)
        }
        #expect(leftovers.isEmpty)
    }

    @Test func evictsSlicesBeyondMaxSizeAndTheirFilesGo() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open(maxSize: 4 * 65536)
        let big = try store.fill(photo, size: 6 * 65536, sliceSize: 65536, seed: 1)
        #expect(big.presentSlices.count == 4 && store.statistics().bytes == 4 * 65536)
        #expect(store.metrics.snapshot.evictions == 2)
        #expect(big.presentSlices == [2, 3, 4, 5])
        #expect(try store.read(photo, index: 0, within: 0..<65536) == nil)
        let files = try FileManager.default.subpathsOfDirectory(atPath: scratch.directory + "/objects")
        #expect(files.filter { $0.contains("-") && !$0.contains("tmp") }.count == 4)
    }

    @Test func aSmallerMaxSizeOnReloadEvictsAtOnce() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 6 * 65536, sliceSize: 65536, seed: 1)
        try store.resize(maxSize: 2 * 65536)
        #expect(store.maxSize == 2 * 65536 && store.statistics().bytes == 2 * 65536)
        #expect(store.metrics.snapshot.evictions == 4 && store.metrics.snapshot.size == 2 * 65536)
        #expect(try store.lookup(photo.name)?.presentSlices == [4, 5])
    }

    @Test func anOpenSliceStaysReadableAfterItsObjectIsDropped() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 65536, sliceSize: 65536, seed: 1)
        guard let open = try store.openSlice(photo, index: 0, within: 0..<65536) else {
            Issue.record("slice 0 is not present")
            return
        }
        try store.invalidate(photo.name)
        #expect(try store.lookup(photo.name) == nil)
        #expect(try open.read() == pattern(1, 0..<65536))
    }

    @Test func aSecondProcessCannotOpenTheDirectoryWhileItIsHeld() throws {
        let scratch = try ScratchStore()
        do {
            let store = try scratch.open()
            #expect(throws: CacheError.directoryLocked(path: scratch.directory)) { try scratch.open() }
            withExtendedLifetime(store) {}
        }
        #expect(throws: Never.self) { try scratch.open() }
    }

    @Test func statisticsCountOnlyTheMatchingObjects() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 65536 + 5, sliceSize: 65536, seed: 1)
        let other = ObjectIdentity(name: objectName("x", bucket: "other"), version: ObjectVersion(etag: "\"o\""))
        _ = try store.fill(other, size: 7, sliceSize: 65536, seed: 1)
        #expect(
            store.statistics { $0.bucket == "b" }
                == StoreStatistics(objects: 1, slices: 2, bytes: 65541, capacity: 1 << 30))
        #expect(store.statistics().bytes == 65548 && store.statistics().objects == 2)
    }

    @Test func remembersA404UntilItsTTL() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        try store.rememberMissing(photo.name, until: 2000, now: 0)
        #expect(try store.isKnownMissing(photo.name, now: 1999))
        #expect(try !store.isKnownMissing(objectName("cat.jpg", bucket: "x"), now: 1999))
        #expect(try !store.isKnownMissing(photo.name, now: 2000))
        try store.rememberMissing(photo.name, until: 5000, now: 0)
        _ = try store.fill(photo, size: 10, sliceSize: 65536, seed: 1)
        #expect(try !store.isKnownMissing(photo.name, now: 2500))
    }

    @Test func theRemembered404sAreBounded() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let cap = SliceStore.maxRememberedMissing
        for index in 0..<cap { try store.rememberMissing(objectName("k\(index)"), until: index < 10 ? 100 : 9000, now: 0) }
        // Full: a new name is not remembered...
        try store.rememberMissing(objectName("late"), until: 9000, now: 50)
        #expect(try !store.isKnownMissing(objectName("late"), now: 60))
        // ...until some have expired, which go first.
        try store.rememberMissing(objectName("later"), until: 9000, now: 200)
        #expect(try store.isKnownMissing(objectName("later"), now: 300))
        #expect(try store.isKnownMissing(objectName("k\(cap - 1)"), now: 300))
        #expect(try !store.isKnownMissing(objectName("k0"), now: 60))
    }

    @Test func anAnswerToAReadSentBeforeAWriteIsNotStoredAfterIt() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let stored = StoredResponse(objectSize: 10, headers: [:])
        let mark = try #require(store.invalidationMark(photo.name))
        _ = try store.invalidate(photo.name)  // the write's answer came first
        #expect(throws: CacheError.objectChanged) {
            try store.store(photo, stored: stored, sliceSize: 65536, now: 0, unlessInvalidatedSince: mark)
        }
        try store.rememberMissing(photo.name, until: 5000, now: 0, unlessInvalidatedSince: mark)
        #expect(try !store.isKnownMissing(photo.name, now: 1))
        // A read sent after the write stores; a purge of many objects counts for every name.
        let fresh = try #require(store.invalidationMark(photo.name))
        _ = try store.store(photo, stored: stored, sliceSize: 65536, now: 0, unlessInvalidatedSince: fresh)
        let other = ObjectIdentity(name: objectName("dog.jpg"), version: ObjectVersion(etag: "\"d\""))
        let beforePurge = try #require(store.invalidationMark(other.name))
        _ = try store.invalidate(where: { $0.key == "nothing" })
        #expect(throws: CacheError.objectChanged) {
            try store.store(other, stored: stored, sliceSize: 65536, now: 0, unlessInvalidatedSince: beforePurge)
        }
    }
}

/// The descriptors the store keeps open for small slices (`SliceDescriptors`): a hit duplicates one, and one
/// never outlives its slice in the store.
@Suite struct SliceDescriptorTests {
    let photo = ObjectIdentity(name: objectName("cat.jpg"), version: ObjectVersion(etag: "\"v1\""))

    /// This process's descriptors that name a deleted file under `directory`.
    func deletedFilesHeld(under directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)
            else { return nil }
            return target.hasPrefix(directory) && target.hasSuffix(" (deleted)") ? target : nil
        }
    }

    @Test func aSmallSliceIsKeptOpenOnceAndEachOpenIsItsOwnDescriptor() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 3 * 65536, sliceSize: 65536, seed: 1)
        #expect(store.keptDescriptorCount == 0)
        guard let first = try store.openSlice(photo, index: 1, within: 0..<3 * 65536),
            let second = try store.openSlice(photo, index: 1, within: 70000..<80000)
        else {
            Issue.record("slice 1 is not present")
            return
        }
        #expect(store.keptDescriptorCount == 1)
        #expect(first.descriptor != second.descriptor)
        #expect(try first.read() == pattern(1, 65536..<131_072))
        #expect(try second.read() == pattern(1, 70000..<80000))
        _ = consume first
        #expect(try second.read() == pattern(1, 70000..<80000))  // closing one leaves the other's file open
        #expect(try store.read(photo, index: 0, within: 0..<65536) == pattern(1, 0..<65536))
        #expect(store.keptDescriptorCount == 2)
    }

    @Test func keptDescriptorsCloseWhenTheirSlicesLeaveTheStore() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 3 * 65536, sliceSize: 65536, seed: 1)
        for index in 0..<3 { _ = try store.read(photo, index: index, within: 0..<3 * 65536) }
        #expect(store.keptDescriptorCount == 3)
        // Evicted: a smaller size pushes out two of them.
        try store.resize(maxSize: 65536)
        #expect(store.metrics.snapshot.evictions == 2)
        #expect(store.keptDescriptorCount == 1)
        #expect(try deletedFilesHeld(under: scratch.directory).isEmpty)
        // Replaced by a new version: its slices are opened by their new names, never through an old descriptor.
        let v2 = ObjectIdentity(name: photo.name, version: ObjectVersion(etag: "\"v2\""))
        _ = try store.fill(v2, size: 3 * 65536, sliceSize: 65536, seed: 2, slices: [2])
        #expect(store.keptDescriptorCount == 0)
        #expect(try store.read(v2, index: 2, within: 0..<3 * 65536) == pattern(2, 131_072..<196_608))
        #expect(try store.read(photo, index: 2, within: 0..<3 * 65536) == nil)
        // Invalidated.
        #expect(store.keptDescriptorCount == 1)
        try store.invalidate(photo.name)
        #expect(store.keptDescriptorCount == 0)
        #expect(try deletedFilesHeld(under: scratch.directory).isEmpty)
    }

    @Test func largeSlicesAreNotKeptAndTheCountIsBounded() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.fill(photo, size: 1 << 20, sliceSize: 512 << 10, seed: 1)
        #expect(try store.read(photo, index: 0, within: 0..<(1 << 20)) == pattern(1, 0..<(512 << 10)))
        #expect(store.keptDescriptorCount == 0)
        let small = (0..<300).map {
            ObjectIdentity(name: objectName("small/\($0)"), version: ObjectVersion(etag: "\"s\""))
        }
        for (seed, identity) in small.enumerated() {
            _ = try store.fill(identity, size: 10, sliceSize: 65536, seed: seed)
            #expect(try store.read(identity, index: 0, within: 0..<10) == pattern(seed, 0..<10))
        }
        #expect(store.keptDescriptorCount == 256)
        // The oldest were closed; they open by name again, the newest by their kept descriptor.
        #expect(try store.read(small[0], index: 0, within: 0..<10) == pattern(0, 0..<10))
        #expect(try store.read(small[299], index: 0, within: 0..<10) == pattern(299, 0..<10))
        #expect(store.keptDescriptorCount == 256)
    }
}
