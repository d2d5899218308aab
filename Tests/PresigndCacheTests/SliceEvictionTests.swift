import PresigndCache
import Testing

/// S3-FIFO by slice under a byte capacity.
@Suite struct SliceEvictionTests {
    @Test func staysWithinCapacityAndEvictsOldestUnusedFirst() {
        var eviction = SliceEviction<Int>(capacity: 100)
        for item in 0..<10 { #expect(eviction.insert(item, size: 10).isEmpty) }
        #expect(eviction.totalSize == 100)
        #expect(eviction.insert(10, size: 10) == [0])
        #expect(eviction.insert(11, size: 25) == [1, 2, 3])
        #expect(eviction.totalSize <= 100)
    }

    @Test func aSliceReadAgainSurvivesAOneTimeScan() {
        var eviction = SliceEviction<Int>(capacity: 100)
        for item in 0..<10 { _ = eviction.insert(item, size: 10) }
        for item in 0..<10 { eviction.touch(item) }  // the working set, read twice
        var evicted: [Int] = []
        for item in 100..<200 { evicted += eviction.insert(item, size: 10) }  // a scan, read once
        #expect(evicted.filter { $0 < 10 }.count <= 2, "\(evicted.prefix(20))")
        #expect((0..<10).filter(eviction.contains).count >= 8)
        #expect(eviction.totalSize <= 100)
    }

    @Test func aGhostReturningGoesStraightToMain() {
        var eviction = SliceEviction<Int>(capacity: 50)
        for item in 0..<6 { _ = eviction.insert(item, size: 10) }
        #expect(!eviction.contains(0))
        _ = eviction.insert(0, size: 10)  // remembered in the ghost queue: enters main
        for item in 10..<15 { _ = eviction.insert(item, size: 10) }
        #expect(eviction.contains(0))
    }

    @Test func removedSlicesFreeTheirBytesAndAreNotEvictedLater() {
        var eviction = SliceEviction<Int>(capacity: 30)
        _ = eviction.insert(1, size: 10)
        _ = eviction.insert(2, size: 10)
        eviction.remove(1)
        #expect(eviction.totalSize == 10 && !eviction.contains(1))
        #expect(eviction.insert(3, size: 10).isEmpty)
        #expect(eviction.insert(4, size: 10).isEmpty)
        #expect(eviction.insert(5, size: 10) == [2])
    }
}
