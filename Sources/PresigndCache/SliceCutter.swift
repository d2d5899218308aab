/// Cuts an upstream answer's body into whole slices as it streams past (issue 23 §6): the body carries the
/// object's bytes `bytes` (all of them for a 200, the `Content-Range` of a 206); a slice is kept only when the body
/// covers it from its first byte to its last, so a fill never names a partial slice. Bytes before the first whole
/// slice are skipped, as are slices the store has (`skipping`); the slice the body ends inside (other than the
/// object's last) is dropped. Pure: the caller
/// hands completed slices to `SliceStore.submitSlice`.
public struct SliceCutter: Sendable {
    public let layout: SliceLayout
    /// The object offset of the next body byte.
    public private(set) var position: Int
    /// The object offset just past the body's last byte.
    public let end: Int
    /// The slice being collected, and its bytes so far; nil between slices (or before the first whole one).
    private var collecting: (index: Int, bytes: [UInt8])?
    /// Set by `stop()`: nothing more is collected (the writer was over its budget, or the answer went wrong).
    public private(set) var isStopped = false

    /// Slices not to collect (the store has them already: a refill writes only what is missing).
    public let skipping: Set<Int>

    public init(layout: SliceLayout, bytes: Range<Int>, skipping: Set<Int> = []) {
        self.layout = layout
        self.position = bytes.lowerBound
        self.end = min(bytes.upperBound, layout.objectSize)
        self.skipping = skipping
    }

    /// A completed slice: its index and exactly its bytes.
    public struct Slice: Sendable, Equatable {
        public var index: Int
        public var bytes: [UInt8]
    }

    /// Whether any of the next `count` body bytes would be kept: when not, the caller need not copy them.
    public func wants(_ count: Int) -> Bool {
        guard !isStopped, count > 0, position < end else { return false }
        if collecting != nil { return true }
        // Not collecting: keeping starts at a slice boundary inside these bytes, of a slice not skipped.
        var next = (position + layout.sliceSize - 1) / layout.sliceSize * layout.sliceSize
        while next < min(position + count, end) {
            if !skipping.contains(next / layout.sliceSize) { return true }
            next += layout.sliceSize
        }
        return false
    }

    /// Takes the next body bytes (`count` of them, whether `bytes` holds them or, when `wants` said no, is empty)
    /// and returns the slices they complete.
    public mutating func consume(count: Int, bytes: [UInt8]) -> [Slice] {
        var completed: [Slice] = []
        var offset = 0
        while offset < count, position < end {
            if isStopped
                || (collecting == nil
                    && (position % layout.sliceSize != 0 || skipping.contains(position / layout.sliceSize)))
            {
                // Skip to the next boundary (or past these bytes).
                let boundary = (position / layout.sliceSize + 1) * layout.sliceSize
                let skipped = min(boundary - position, count - offset)
                position += skipped
                offset += skipped
                continue
            }
            if collecting == nil {
                let index = position / layout.sliceSize
                var fresh: [UInt8] = []
                fresh.reserveCapacity(layout.bytes(ofSlice: index).count)
                collecting = (index, fresh)
            }
            guard var current = collecting else { break }
            collecting = nil  // the buffer is appended to uniquely, not copied
            let sliceEnd = layout.bytes(ofSlice: current.index).upperBound
            let taken = min(sliceEnd - position, count - offset)
            guard bytes.count >= offset + taken else {
                // The caller did not copy bytes that were wanted: nothing of this slice can be trusted.
                isStopped = true
                continue
            }
            current.bytes.append(contentsOf: bytes[offset..<(offset + taken)])
            position += taken
            offset += taken
            if position == sliceEnd {
                completed.append(Slice(index: current.index, bytes: current.bytes))
            } else {
                collecting = current
            }
        }
        return completed
    }

    /// Stops collecting (a partly collected slice is dropped).
    public mutating func stop() {
        isStopped = true
        collecting = nil
    }
}
