import Testing

@testable import PresigndProxy

/// A missed range widened to whole slices upstream (issue 23 §3): slices of 100 bytes.
@Suite struct WidenedRangeTests {
    @Test func aKnownObjectsRangeIsWidenedToItsSlicesBothWays() {
        #expect(
            WidenedRange.widen("bytes=150-420", objectSize: 1000, sliceSize: 100)
                == WidenedRange(field: "bytes=100-499", wanted: 150..<421))
        // The end clamps at the object's end, written open.
        #expect(WidenedRange.widen("bytes=950-", objectSize: 1000, sliceSize: 100)?.field == "bytes=900-")
        #expect(WidenedRange.widen("bytes=950-5000", objectSize: 1000, sliceSize: 100)?.field == "bytes=900-")
    }

    @Test func anUnknownObjectsRangeIsWidenedToo() {
        #expect(
            WidenedRange.widen("bytes=150-420", objectSize: nil, sliceSize: 100)
                == WidenedRange(field: "bytes=100-499", wanted: 150..<421))
        #expect(WidenedRange.widen("bytes=150-", objectSize: nil, sliceSize: 100)?.field == "bytes=100-")
    }

    @Test(arguments: [nil, "bytes=-100", "bytes=0-9,20-29", "bytes=100-199", "bytes=0-", "items=1-2", "bytes=900-"])
    func whatNeedsNoWideningOrCannotBeWidenedIsLeft(field: String?) {
        #expect(WidenedRange.widen(field, objectSize: 1000, sliceSize: 100) == nil)
    }
}
