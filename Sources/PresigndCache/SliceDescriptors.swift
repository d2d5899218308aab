#if canImport(Glibc)
    import Glibc
#endif

/// Descriptors of small present slices kept open by the store (issue 23), as nginx's `open_file_cache` keeps
/// files open: a hit duplicates one (`F_DUPFD_CLOEXEC`) instead of opening the slice by its path, whose walk
/// through the cache directory was the largest single cost of a cached 1 KiB GET after the sends.
///
/// Kept under the store's lock and closed when the slice leaves the store (evicted, invalidated, replaced, gone),
/// so a descriptor here always names the present slice, and an evicted file's blocks are freed at once. Only
/// slices of at most `maxSliceLength` bytes are kept (for a large slice the open is a small part of sending it);
/// at most `capacity` at once, the oldest closed first.
struct SliceDescriptors: Sendable {
    static let maxSliceLength = 256 << 10

    let capacity: Int
    private var open: [SliceID: (descriptor: Int32, stamp: Int)] = [:]
    /// Kept slices, oldest first, from `first` on; an item whose stamp no longer matches was forgotten already.
    private var order: [(slice: SliceID, stamp: Int)] = []
    private var first = 0
    private var stamp = 0

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { open.count }

    /// A new descriptor of the kept slice (the caller's to close), or nil when it is not kept or the duplicate
    /// failed (out of descriptors: the caller opens by path, which fails the same way or not).
    func duplicate(_ slice: SliceID) -> Int32? {
        guard let kept = open[slice] else { return nil }
        let copy = fcntl(kept.descriptor, F_DUPFD_CLOEXEC, 0)
        return copy >= 0 ? copy : nil
    }

    /// Keeps a duplicate of `descriptor` (the caller keeps its own) for `slice`, closing the oldest over capacity.
    mutating func keep(_ slice: SliceID, duplicating descriptor: Int32) {
        guard capacity > 0, open[slice] == nil else { return }
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return }
        while open.count >= capacity, first < order.count {
            let oldest = order[first]
            first += 1
            if let kept = open[oldest.slice], kept.stamp == oldest.stamp { forget(oldest.slice) }
        }
        stamp += 1
        open[slice] = (copy, stamp)
        order.append((slice, stamp))
        if order.count - first > 2 * capacity + 64 {  // forgotten items pile up: keep the live ones, in order
            order = order[first...].filter { open[$0.slice]?.stamp == $0.stamp }
            first = 0
        } else if first > 64 && first * 2 > order.count {  // drop the consumed front now and then
            order.removeFirst(first)
            first = 0
        }
    }

    /// Closes the kept descriptor of `slice`, if any (it left the store).
    mutating func forget(_ slice: SliceID) {
        guard let kept = open.removeValue(forKey: slice) else { return }
        FileSystem.close(kept.descriptor)
    }

    mutating func closeAll() {
        for kept in open.values { FileSystem.close(kept.descriptor) }
        open = [:]
        order = []
        first = 0
    }
}
