import PresigndCache
import Testing

/// Cutting a streamed answer into whole slices (issue 23 §6): only slices the body covers from first byte to last.
@Suite struct SliceCutterTests {
    /// An object of 1000 bytes in slices of 100; byte `i` is `i % 251`.
    static let layout = SliceLayout(objectSize: 1000, sliceSize: 100)
    static func object(_ range: Range<Int>) -> [UInt8] { range.map { UInt8($0 % 251) } }

    /// Feeds the body of `bytes` in pieces of `piece` bytes, copying only what the cutter wants.
    static func cut(_ bytes: Range<Int>, piece: Int, layout: SliceLayout = layout) -> [SliceCutter.Slice] {
        var cutter = SliceCutter(layout: layout, bytes: bytes)
        var slices: [SliceCutter.Slice] = []
        var offset = bytes.lowerBound
        while offset < bytes.upperBound {
            let count = min(piece, bytes.upperBound - offset)
            let copy = cutter.wants(count) ? object(offset..<(offset + count)) : []
            slices += cutter.consume(count: count, bytes: copy)
            offset += count
        }
        return slices
    }

    @Test(arguments: [1, 7, 100, 333, 1000])
    func aWholeObjectGivesEverySliceExactly(piece: Int) {
        let slices = Self.cut(0..<1000, piece: piece)
        #expect(slices.map(\.index) == Array(0..<10))
        for slice in slices { #expect(slice.bytes == Self.object(Self.layout.bytes(ofSlice: slice.index))) }
    }

    @Test func theShortLastSliceIsWholeAtTheObjectsEnd() {
        let layout = SliceLayout(objectSize: 950, sliceSize: 100)
        let slices = Self.cut(0..<950, piece: 64, layout: layout)
        #expect(slices.count == 10 && slices.last?.bytes.count == 50)
    }

    @Test(arguments: [1, 13, 64])
    func aRangeKeepsOnlyTheSlicesItCoversWhole(piece: Int) {
        // 150..<620: slice 1 starts before the body, slice 6 ends after it; 2 to 5 are whole.
        let slices = Self.cut(150..<620, piece: piece)
        #expect(slices.map(\.index) == [2, 3, 4, 5])
        for slice in slices { #expect(slice.bytes == Self.object(Self.layout.bytes(ofSlice: slice.index))) }
        // A range ending at the object's end keeps its short-or-whole last slice.
        #expect(Self.cut(900..<1000, piece: piece).map(\.index) == [9])
        // Inside one slice: nothing, and nothing is copied.
        #expect(Self.cut(210..<290, piece: piece).isEmpty)
    }

    @Test func bytesBeforeTheFirstBoundaryAreNotWanted() {
        var cutter = SliceCutter(layout: Self.layout, bytes: 150..<1000)
        #expect(!cutter.wants(50))  // 150..<200: before slice 2
        #expect(cutter.consume(count: 50, bytes: []).isEmpty)
        #expect(cutter.wants(1) && cutter.position == 200)
    }

    @Test func stoppingDropsThePartSliceAndKeepsNothingMore() {
        var cutter = SliceCutter(layout: Self.layout, bytes: 0..<1000)
        #expect(cutter.consume(count: 150, bytes: Self.object(0..<150)).map(\.index) == [0])
        cutter.stop()
        #expect(!cutter.wants(850))
        #expect(cutter.consume(count: 850, bytes: []).isEmpty)
    }

    @Test func wantedBytesThatWereNotCopiedStopTheCutter() {
        var cutter = SliceCutter(layout: Self.layout, bytes: 0..<1000)
        #expect(cutter.consume(count: 100, bytes: []).isEmpty)
        #expect(cutter.isStopped)
        #expect(cutter.consume(count: 100, bytes: Self.object(100..<200)).isEmpty)
    }

    @Test func slicesTheStoreHasAreNeitherCopiedNorCut() {
        var cutter = SliceCutter(layout: Self.layout, bytes: 0..<1000, skipping: [0, 1, 2, 5])
        #expect(!cutter.wants(300))  // slices 0 to 2: nothing to copy
        #expect(cutter.consume(count: 300, bytes: []).isEmpty)
        var slices: [SliceCutter.Slice] = []
        var offset = 300
        while offset < 1000 {
            let copy = cutter.wants(50) ? Self.object(offset..<(offset + 50)) : []
            slices += cutter.consume(count: 50, bytes: copy)
            offset += 50
        }
        #expect(slices.map(\.index) == [3, 4, 6, 7, 8, 9])
        for slice in slices { #expect(slice.bytes == Self.object(Self.layout.bytes(ofSlice: slice.index))) }
    }
}
