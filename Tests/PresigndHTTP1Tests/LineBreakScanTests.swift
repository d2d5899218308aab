import Testing

@testable import PresigndHTTP1

/// The word-at-a-time CR/LF scan agrees with a byte loop for every position, stop and byte value.
@Suite struct LineBreakScanTests {
    static func naive(_ bytes: [UInt8], from: Int, before stop: Int) -> Int {
        var index = from
        while index < stop, bytes[index] != 0x0D, bytes[index] != 0x0A { index += 1 }
        return index
    }

    @Test(arguments: [UInt8(0x0D), 0x0A, 0x00, 0x0C, 0x0E, 0x8D, 0x8A, 0xFF, 0x2D, 0x0B])
    func agreesWithAByteLoop(marker: UInt8) {
        for length in 0..<40 {
            for position in 0...length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                if position < length { bytes[position] = marker }
                bytes.withUnsafeBufferPointer { buffer in
                    for from in stride(from: 0, through: length, by: 3) {
                        for stop in from...length {
                            #expect(
                                HeadReader.skipToLineBreak(buffer, from: from, before: stop)
                                    == Self.naive(bytes, from: from, before: stop))
                        }
                    }
                }
            }
        }
    }
}
