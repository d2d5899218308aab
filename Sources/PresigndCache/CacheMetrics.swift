import PresigndSync

/// The cache's counters (issue 23 §7), shared by the workers of one store: the connection counts hits, misses,
/// revalidations and bytes; the store counts evictions and its size. Read as a `Snapshot` for `/metrics`.
public final class CacheMetrics: Sendable {
    public struct Snapshot: Sendable, Equatable {
        public var hits = 0
        public var misses = 0
        public var revalidations = 0
        public var bytesServedFromCache = 0
        public var bytesFetched = 0
        public var evictions = 0
        /// Filled slices that could not be written (disk full, I/O error): the cache stays correct, only smaller.
        public var writeFailures = 0
        /// Cacheable answers passed uncached because the disk was behind (the write queue full) or the fills under
        /// way held the memory budget (`SliceStore.takeFillPermit`).
        public var fillsSkipped = 0
        /// Bytes of present slices now (a gauge).
        public var size = 0
    }

    private let counters = Locked(Snapshot())

    public init() {}

    public var snapshot: Snapshot { counters.withLock { $0 } }

    public func countHit(bytes: Int) {
        counters.withLock {
            $0.hits += 1
            $0.bytesServedFromCache += bytes
        }
    }

    public func countMiss(bytesFetched: Int) {
        counters.withLock {
            $0.misses += 1
            $0.bytesFetched += bytesFetched
        }
    }

    /// Bytes fetched upstream by a fill already counted as a miss (later runs of one request).
    public func countFetched(bytes: Int) { counters.withLock { $0.bytesFetched += bytes } }

    public func countRevalidation() { counters.withLock { $0.revalidations += 1 } }

    func countWriteFailure() { counters.withLock { $0.writeFailures += 1 } }

    func countFillSkipped() { counters.withLock { $0.fillsSkipped += 1 } }

    func countEvictions(_ count: Int) { counters.withLock { $0.evictions += count } }

    func setSize(_ bytes: Int) { counters.withLock { $0.size = bytes } }
}
