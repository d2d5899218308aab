/// How an object is cut into slices, and the range arithmetic over them (issue 23 §3). Pure.
///
/// Slice `i` holds bytes `i * sliceSize ..< min((i + 1) * sliceSize, objectSize)`; only the last may be short.
public struct SliceLayout: Sendable, Hashable {
    public let objectSize: Int
    public let sliceSize: Int

    public init(objectSize: Int, sliceSize: Int) {
        precondition(sliceSize > 0 && objectSize >= 0, "a slice layout needs a positive slice size")
        self.objectSize = objectSize
        self.sliceSize = sliceSize
    }

    public var sliceCount: Int { (objectSize + sliceSize - 1) / sliceSize }

    /// The object's bytes slice `index` holds.
    public func bytes(ofSlice index: Int) -> Range<Int> {
        let start = index * sliceSize
        return start..<min(start + sliceSize, objectSize)
    }

    /// The slices a byte range touches (empty for an empty range).
    public func slices(covering bytes: Range<Int>) -> Range<Int> {
        guard !bytes.isEmpty else { return 0..<0 }
        return (bytes.lowerBound / sliceSize)..<((bytes.upperBound - 1) / sliceSize + 1)
    }

    /// The part of slice `index` inside `bytes`, as an offset into the slice and a length: what the connection
    /// hands to `evbuffer_add_file` after `SliceStore.openSlice`.
    public func piece(ofSlice index: Int, within bytes: Range<Int>) -> (offset: Int, length: Int) {
        let slice = self.bytes(ofSlice: index).clamped(to: bytes)
        return (slice.lowerBound - index * sliceSize, slice.count)
    }

    /// Aligned upstream byte ranges that fetch the `missing` slices: consecutive slices are merged into one
    /// request of at most `maxSlicesPerRequest`, so a cold sequential read is a few large GETs, not one per slice.
    public func upstreamRanges(missing: [Int], maxSlicesPerRequest: Int = 16) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        for index in missing.sorted() {
            if let last = runs.last, last.upperBound == index, last.count < maxSlicesPerRequest {
                runs[runs.count - 1] = last.lowerBound..<(index + 1)
            } else if runs.last?.contains(index) != true {
                runs.append(index..<(index + 1))
            }
        }
        return runs.map { bytes(ofSlice: $0.lowerBound).lowerBound..<bytes(ofSlice: $0.upperBound - 1).upperBound }
    }

    /// The `Range` field for an upstream request of `bytes` (RFC 9110 §14.1.2: last byte inclusive).
    public static func rangeField(_ bytes: Range<Int>) -> String {
        "bytes=\(bytes.lowerBound)-\(bytes.upperBound - 1)"
    }
}
