import Foundation
import PresigndCache
import PresigndTestSupport
import PresigndSync
import Testing

/// Workers sharing one store: fills, reads, replacements, invalidations and evictions at once never give a
/// reader bytes of another version, and the accounting ends consistent with the disk.
@Suite struct SliceStoreConcurrencyTests {
    @Test func concurrentFillsReadsReplacementsAndEvictionsServeOnlyCorrectBytes() throws {
        let scratch = try ScratchStore()
        let sliceSize = 65536
        let store = try scratch.open(maxSize: 12 * sliceSize)
        let wrongReads = Locked(0)
        let goodReads = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var random = SplitMix(seed: UInt64(worker) + 1)
            for _ in 0..<300 {
                let object = Int(random.next() % 6)
                let version = Int(random.next() % 2)  // two versions of each object race each other
                let identity = ObjectIdentity(
                    name: objectName("o\(object)"), version: ObjectVersion(etag: "\"\(version)\""))
                let seed = object * 10 + version
                let index = Int(random.next() % 4)
                let bytes = index * sliceSize..<(index + 1) * sliceSize
                do {
                    switch random.next() % 10 {
                    case 0:
                        try store.invalidate(identity.name)
                    case 1...4:
                        let stored = StoredResponse(objectSize: 4 * sliceSize, headers: ["ETag": identity.version.etag])
                        try store.store(identity, stored: stored, sliceSize: sliceSize, now: 0)
                        let writer = try store.beginSlice(identity, index: index)
                        try writer.append(pattern(seed, bytes))
                        try store.commit(writer)
                    default:
                        if let read = try store.read(identity, index: index, within: bytes) {
                            if read == pattern(seed, bytes) {
                                goodReads.withLock { $0 += 1 }
                            } else {
                                wrongReads.withLock { $0 += 1 }
                            }
                        }
                    }
                } catch CacheError.objectChanged {
                    // A replacement or an invalidation overtook this fill: expected, nothing was named.
                } catch {
                    Issue.record("worker \(worker): \(error)")
                }
            }
        }
        #expect(wrongReads.withLock { $0 } == 0)
        #expect(goodReads.withLock { $0 } > 0)
        let statistics = store.statistics()
        #expect(statistics.bytes <= 12 * sliceSize)
        #expect(store.metrics.snapshot.size == statistics.bytes)
        // What the index says is what the disk holds: a reopen keeps exactly the present slices.
        let present = statistics.slices
        _ = consume store
        let reopened = try scratch.open(maxSize: 12 * sliceSize)
        #expect(reopened.integrity.keptSlices == present)
        #expect(reopened.statistics().slices == present)
    }

    @Test func aSliceFileRemovedBehindTheStoresBackIsAMiss() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let identity = ObjectIdentity(name: objectName("k"), version: ObjectVersion(etag: "\"e\""))
        _ = try store.fill(identity, size: 10, sliceSize: 65536, seed: 1)
        let directory = scratch.directory + "/objects"
        for path in try FileManager.default.subpathsOfDirectory(atPath: directory) where path.hasSuffix("-0") {
            try FileManager.default.removeItem(atPath: directory + "/" + path)
        }
        #expect(try store.read(identity, index: 0, within: 0..<10) == nil)
        #expect(try store.lookup(identity.name)?.presentSlices == [])
        #expect(store.statistics().bytes == 0)
    }

    @Test func metricsCountHitsMissesAndBytes() {
        let metrics = CacheMetrics()
        metrics.countHit(bytes: 100)
        metrics.countHit(bytes: 50)
        metrics.countMiss(bytesFetched: 1 << 20)
        metrics.countFetched(bytes: 10)
        metrics.countRevalidation()
        let snapshot = metrics.snapshot
        #expect(snapshot.hits == 2 && snapshot.bytesServedFromCache == 150)
        #expect(snapshot.misses == 1 && snapshot.bytesFetched == (1 << 20) + 10 && snapshot.revalidations == 1)
    }
}
