import PresigndCache
import Testing

/// Client ranges, slice coverage, aligned upstream ranges and answer framing (issue 23 §3).
@Suite struct RangeMathTests {
    @Test(
        arguments: [
            (nil, ClientRange.whole),
            ("bytes=0-99", .bytes(0..<100)),
            ("bytes=900-", .bytes(900..<1000)),
            ("bytes=-100", .bytes(900..<1000)),
            ("bytes=-5000", .bytes(0..<1000)),
            ("bytes=990-5000", .bytes(990..<1000)),
            ("BYTES=1-1", .bytes(1..<2)),
            ("bytes=1000-", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=0-1,5-9", .multiple),
            ("bytes=0-1, ,", .bytes(0..<2)),
            ("bytes=1000-,2000-", .unsatisfiable),
            ("bytes=5-1", .whole),
            ("bytes=a-b", .whole),
            ("items=0-1", .whole),
            ("bytes=", .whole),
            ("bytes=--1", .whole),
        ] as [(String?, ClientRange)])
    func parsesRangeAgainstAThousandByteObject(field: String?, expected: ClientRange) {
        #expect(ClientRange.parse(field, objectSize: 1000) == expected)
    }

    @Test func rangesOfAnEmptyObjectAreUnsatisfiable() {
        #expect(ClientRange.parse("bytes=0-", objectSize: 0) == .unsatisfiable)
        #expect(ClientRange.parse("bytes=-1", objectSize: 0) == .unsatisfiable)
        #expect(ContentRange.answer(.whole, objectSize: 0)?.contentLength == 0)
    }

    @Test func answersFrameStatusLengthAndContentRange() {
        let whole = ContentRange.answer(.whole, objectSize: 1000)
        #expect(whole?.status == 200 && whole?.contentLength == 1000 && whole?.contentRange == nil)
        let part = ContentRange.answer(.bytes(100..<200), objectSize: 1000)
        #expect(part?.status == 206 && part?.contentLength == 100 && part?.contentRange == "bytes 100-199/1000")
        let none = ContentRange.answer(.unsatisfiable, objectSize: 1000)
        #expect(none?.status == 416 && none?.contentRange == "bytes */1000" && none?.contentLength == 0)
        #expect(ContentRange.answer(.multiple, objectSize: 1000) == nil)
    }

    @Test func parsesUpstreamContentRange() {
        #expect(ContentRange.parse("bytes 0-99/1000")?.bytes == 0..<100)
        #expect(ContentRange.parse("bytes 0-99/1000")?.size == 1000)
        #expect(ContentRange.parse("bytes 0-1000/1000") == nil)
        #expect(ContentRange.parse("bytes */1000") == nil)
        #expect(ContentRange.parse("bytes 5-1/10") == nil)
        // Lengths are ASCII digits only, at most 18 of them.
        #expect(ContentRange.parse("bytes 0-0/999999999999999999")?.size == 999_999_999_999_999_999)
        for bad in [
            "bytes 0-0/1000000000000000000", "bytes 0-9/1e3", "bytes 0-9/", "bytes -0-9/10", "bytes 0-9/+10",
            "bytes 0-9/\u{0661}0", "bytes 0-9/ 10", "bytes 0-٩/10",
        ] {
            #expect(ContentRange.parse(bad) == nil, "\(bad)")
        }
    }

    private let layout = SliceLayout(objectSize: 10 * 1024 + 100, sliceSize: 1024)

    @Test func slicesCoverARangeAndTheLastIsShort() {
        #expect(layout.sliceCount == 11)
        #expect(layout.bytes(ofSlice: 10) == 10240..<10340)
        #expect(layout.slices(covering: 0..<1) == 0..<1)
        #expect(layout.slices(covering: 1023..<1025) == 0..<2)
        #expect(layout.slices(covering: 2048..<4096) == 2..<4)
        #expect(layout.slices(covering: 0..<10340) == 0..<11)
        #expect(layout.slices(covering: 5..<5).isEmpty)
        #expect(SliceLayout(objectSize: 0, sliceSize: 1024).sliceCount == 0)
    }

    @Test func piecesLocateTheRangeInsideEachSlice() {
        #expect(layout.piece(ofSlice: 0, within: 1000..<3000) == (1000, 24))
        #expect(layout.piece(ofSlice: 1, within: 1000..<3000) == (0, 1024))
        #expect(layout.piece(ofSlice: 2, within: 1000..<3000) == (0, 952))
        #expect(layout.piece(ofSlice: 10, within: 0..<10340) == (0, 100))
    }

    @Test func missingSlicesBecomeAlignedMergedUpstreamRanges() {
        #expect(layout.upstreamRanges(missing: [3, 1, 2, 7, 10]) == [1024..<4096, 7168..<8192, 10240..<10340])
        #expect(
            layout.upstreamRanges(missing: Array(0..<11), maxSlicesPerRequest: 4) == [
                0..<4096, 4096..<8192, 8192..<10340,
            ])
        #expect(layout.upstreamRanges(missing: [2, 2]) == [2048..<3072])
        #expect(layout.upstreamRanges(missing: []).isEmpty)
        #expect(SliceLayout.rangeField(1024..<4096) == "bytes=1024-4095")
    }
}
