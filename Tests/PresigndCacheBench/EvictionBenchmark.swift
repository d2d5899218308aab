import PresigndCache
import PresigndTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// S3-FIFO (the store's `SliceEviction`) against LRU, by slice, on synthetic read traces: the byte hit ratio at
/// several cache sizes. Deterministic (seeded), so the figures repeat.
struct EvictionBenchmark {
    /// One read: which object, which slices.
    struct Read {
        var object: Int
        var slices: Range<Int>
    }

    struct Workload {
        var name: String
        var reads: [Read]
        var sliceCounts: [Int]
    }

    func run() {
        for workload in [zipfWithScans(), videoSeeks()] {
            let unique = Set(
                workload.reads.flatMap { read in read.slices.map { SliceID(object: read.object, index: $0) } })
            print("eviction (\(workload.name)): \(workload.reads.count) reads, \(unique.count) distinct slices")
            for fraction in [5, 10, 25] {
                let capacity = unique.count * fraction / 100
                let fifo = hitRatio(workload, policy: S3FIFOPolicy(capacity: capacity))
                let lru = hitRatio(workload, policy: LRUPolicy(capacity: capacity))
                print(
                    "  cache \(fraction)% of the slices: S3-FIFO \(fixed(fifo * 100, digits: 1))% hits, LRU \(fixed(lru * 100, digits: 1))%"
                )
            }
        }
    }

    /// Objects of 1 to 64 slices with Zipf(0.9) popularity, read whole or from a random slice on; every 50th
    /// read is a one-time scan of a large object nobody reads again (a backup, a build artifact).
    private func zipfWithScans() -> Workload {
        var random = SplitMix(seed: 23)
        let objects = 2000
        let sliceCounts = (0..<objects).map { _ in 1 << Int(random.next() % 7) }
        let zipf = Zipf(count: objects, exponent: 0.9)
        var reads: [Read] = []
        var scanObject = objects
        for step in 0..<200_000 {
            if step % 50 == 0 {
                reads.append(Read(object: scanObject, slices: 0..<64))
                scanObject += 1
                continue
            }
            let object = zipf.sample(&random)
            let start = random.next() % 2 == 0 ? 0 : Int(random.next() % UInt64(sliceCounts[object]))
            reads.append(Read(object: object, slices: start..<sliceCounts[object]))
        }
        return Workload(name: "objects, Zipf 0.9, one-time scans", reads: reads, sliceCounts: sliceCounts)
    }

    /// A video library: 200 files of 256 slices, Zipf(1.0) popularity, each view seeks to a random point and
    /// plays 8 slices.
    private func videoSeeks() -> Workload {
        var random = SplitMix(seed: 7)
        let zipf = Zipf(count: 200, exponent: 1.0)
        let reads = (0..<100_000).map { _ -> Read in
            let start = Int(random.next() % 248)
            return Read(object: zipf.sample(&random), slices: start..<(start + 8))
        }
        return Workload(name: "video seeks, Zipf 1.0", reads: reads, sliceCounts: Array(repeating: 256, count: 200))
    }

    private func hitRatio(_ workload: Workload, policy: some EvictionPolicy) -> Double {
        var policy = policy
        var hits = 0
        var total = 0
        for read in workload.reads {
            for index in read.slices {
                total += 1
                if policy.access(SliceID(object: read.object, index: index)) { hits += 1 }
            }
        }
        return Double(hits) / Double(total)
    }

    struct SliceID: Hashable, Sendable {
        var object: Int
        var index: Int
    }
}

/// A policy under test: `access` says whether the slice was held, and stores it when it was not.
protocol EvictionPolicy {
    mutating func access(_ slice: EvictionBenchmark.SliceID) -> Bool
}

struct S3FIFOPolicy: EvictionPolicy {
    var eviction: SliceEviction<EvictionBenchmark.SliceID>

    init(capacity: Int) { eviction = SliceEviction(capacity: capacity) }

    mutating func access(_ slice: EvictionBenchmark.SliceID) -> Bool {
        if eviction.contains(slice) {
            eviction.touch(slice)
            return true
        }
        _ = eviction.insert(slice, size: 1)
        return false
    }
}

/// Least recently used, as a doubly linked list over array slots.
struct LRUPolicy: EvictionPolicy {
    let capacity: Int
    private var slots: [EvictionBenchmark.SliceID: Int] = [:]
    private var items: [EvictionBenchmark.SliceID] = []
    private var previous: [Int] = []
    private var next: [Int] = []
    private var head = -1  // most recent
    private var tail = -1  // least recent

    init(capacity: Int) { self.capacity = capacity }

    mutating func access(_ slice: EvictionBenchmark.SliceID) -> Bool {
        if let slot = slots[slice] {
            unlink(slot)
            pushFront(slot)
            return true
        }
        let slot: Int
        if slots.count >= capacity, tail >= 0 {
            slot = tail
            unlink(slot)
            slots[items[slot]] = nil
            items[slot] = slice
        } else {
            slot = items.count
            items.append(slice)
            previous.append(-1)
            next.append(-1)
        }
        slots[slice] = slot
        pushFront(slot)
        return false
    }

    private mutating func unlink(_ slot: Int) {
        if previous[slot] >= 0 { next[previous[slot]] = next[slot] } else { head = next[slot] }
        if next[slot] >= 0 { previous[next[slot]] = previous[slot] } else { tail = previous[slot] }
    }

    private mutating func pushFront(_ slot: Int) {
        previous[slot] = -1
        next[slot] = head
        if head >= 0 { previous[head] = slot }
        head = slot
        if tail < 0 { tail = slot }
    }
}

/// Zipf-distributed ranks by inverse transform over the cumulative weights.
struct Zipf {
    private let cumulative: [Double]

    init(count: Int, exponent: Double) {
        var sum = 0.0
        var cumulative: [Double] = []
        for rank in 1...count {
            sum += 1 / pow(Double(rank), exponent)
            cumulative.append(sum)
        }
        self.cumulative = cumulative.map { $0 / sum }
    }

    func sample(_ random: inout SplitMix) -> Int {
        let target = Double(random.next() >> 11) / Double(1 << 53)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
