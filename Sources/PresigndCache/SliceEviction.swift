/// S3-FIFO over slices (Yang et al., SOSP 2023), by bytes: the eviction policy the store uses; chosen over LRU
/// by `presignd-cache-bench` (docs/ARCHITECTURE.md, "Cache"). Pure.
///
/// New slices enter a small FIFO (10% of the bytes); one read again before leaving it moves them to the main FIFO,
/// otherwise they go, leaving their name in a ghost FIFO, and a slice that returns while remembered there enters
/// main directly. Main is a FIFO with reinsertion: a slice read since it was last examined gets another round.
/// One-time scans (a big object read once) thus pass through the small queue without flushing what is reused.
public struct SliceEviction<Item: Hashable & Sendable>: Sendable {
    public private(set) var capacity: Int
    public private(set) var totalSize = 0

    private enum Queue { case small, main }
    private struct Entry {
        var size: Int
        var frequency: Int
        var queue: Queue
        /// Position stamp: a queue slot whose stamp differs is a leftover of a removal or a move.
        var stamp: Int
    }

    private var entries: [Item: Entry] = [:]
    private var small = FIFO<(item: Item, stamp: Int)>()
    private var main = FIFO<(item: Item, stamp: Int)>()
    private var smallSize = 0
    private var ghost = FIFO<Item>()
    private var ghostMembers: [Item: Int] = [:]
    private var nextStamp = 0

    public init(capacity: Int) {
        self.capacity = capacity
    }

    public var count: Int { entries.count }
    public func contains(_ item: Item) -> Bool { entries[item] != nil }

    /// A slice now stored. Returns the slices to evict (already forgotten here) to stay within `capacity`.
    public mutating func insert(_ item: Item, size: Int) -> [Item] {
        precondition(size > 0, "a slice has bytes")
        if entries[item] != nil { remove(item) }
        let fromGhost = ghostMembers[item] != nil
        if fromGhost { forgetGhost(item) }
        let stamp = takeStamp()
        entries[item] = Entry(size: size, frequency: 0, queue: fromGhost ? .main : .small, stamp: stamp)
        if fromGhost {
            main.push((item, stamp))
        } else {
            small.push((item, stamp))
            smallSize += size
        }
        totalSize += size
        return evictOverCapacity()
    }

    /// A new capacity (a reload changed `max_size`); returns the slices to evict to fit it.
    public mutating func resize(capacity: Int) -> [Item] {
        self.capacity = capacity
        return evictOverCapacity()
    }

    /// A read of a stored slice.
    public mutating func touch(_ item: Item) {
        guard var entry = entries[item] else { return }
        entry.frequency = min(entry.frequency + 1, 3)
        entries[item] = entry
    }

    /// A slice removed by invalidation or replacement (not an eviction: it leaves no ghost).
    public mutating func remove(_ item: Item) {
        guard let entry = entries.removeValue(forKey: item) else { return }
        totalSize -= entry.size
        if entry.queue == .small { smallSize -= entry.size }
    }

    private mutating func evictOverCapacity() -> [Item] {
        var victims: [Item] = []
        while totalSize > capacity, !entries.isEmpty {
            // The paper's rule: the small queue gives up a slice while it holds 10% or more.
            if smallSize > 0 && (smallSize >= capacity / 10 || totalSize == smallSize) {
                evictFromSmall(into: &victims)
            } else {
                evictFromMain(into: &victims)
            }
        }
        return victims
    }

    private mutating func evictFromSmall(into victims: inout [Item]) {
        while let (item, stamp) = small.pop() {
            guard var entry = entries[item], entry.stamp == stamp, entry.queue == .small else { continue }
            smallSize -= entry.size
            if entry.frequency > 0 {
                entry.queue = .main
                entry.frequency = 0
                entry.stamp = takeStamp()
                entries[item] = entry
                main.push((item, entry.stamp))
                continue
            }
            entries[item] = nil
            totalSize -= entry.size
            remember(item)
            victims.append(item)
            return
        }
    }

    private mutating func evictFromMain(into victims: inout [Item]) {
        while let (item, stamp) = main.pop() {
            guard var entry = entries[item], entry.stamp == stamp, entry.queue == .main else { continue }
            if entry.frequency > 0 {
                entry.frequency -= 1
                entry.stamp = takeStamp()
                entries[item] = entry
                main.push((item, entry.stamp))
                continue
            }
            entries[item] = nil
            totalSize -= entry.size
            victims.append(item)
            return
        }
    }

    /// The ghost FIFO remembers as many names as main holds slices (at least 64).
    private mutating func remember(_ item: Item) {
        ghost.push(item)
        ghostMembers[item, default: 0] += 1
        while ghostMembers.count > max(64, entries.count), let old = ghost.pop() {
            forgetGhost(old)
        }
    }

    private mutating func forgetGhost(_ item: Item) {
        guard let count = ghostMembers[item] else { return }
        ghostMembers[item] = count > 1 ? count - 1 : nil
    }

    private mutating func takeStamp() -> Int {
        nextStamp += 1
        return nextStamp
    }
}

/// A first-in first-out queue over an array: pushes at the back, pops at the front, storage reclaimed in bulk.
struct FIFO<Element: Sendable>: Sendable {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }

    mutating func push(_ element: Element) { storage.append(element) }

    mutating func pop() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
