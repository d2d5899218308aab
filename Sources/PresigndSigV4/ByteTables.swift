/// Byte lookup tables shared by the encoders: no `String(format:)`, no per-byte branching on ranges.
enum ByteTables {
    /// Upper-case hex digits for `%XY` (§2.1: "percent-encode ... with upper-case hex").
    static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)
    /// Lower-case hex digits for digests and signatures (`Hex()` is lower case, §1).
    static let lowerHex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `true` for `A–Z a–z 0–9 - _ . ~`, the bytes UriEncode keeps (§2.1).
    static let unreserved: [Bool] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// The value of a hex digit (either case), or 0xFF for anything else.
    static let hexValue: [UInt8] = (0..<256).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(value) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(value) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(value) - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }

    /// Appends the lower-case hex form of `bytes` to `output`.
    static func appendLowerHex(_ bytes: UnsafeRawBufferPointer, to output: inout some ByteSink) {
        // Through a stack buffer: one append per 32 input bytes instead of two per byte.
        var chunk: (Digest32, Digest32) = ((0, 0, 0, 0), (0, 0, 0, 0))
        withUnsafeMutableBytes(of: &chunk) { chunk in
            let text = chunk.bindMemory(to: UInt8.self)
            var index = 0
            while index < bytes.count {
                let end = min(index + text.count / 2, bytes.count)
                let written = writeLowerHex(UnsafeRawBufferPointer(rebasing: bytes[index..<end]), into: text)
                output.append(bytes: UnsafeBufferPointer(rebasing: text[0..<written]))
                index = end
            }
        }
    }

    /// Lower-case hex of `bytes` as a `String`.
    static func lowerHexString(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { writeLowerHex(bytes, into: $0) }
    }

    /// Writes the two lower-case hex digits of each byte into `output` (room for `2 * bytes.count`) through
    /// the pair table: one lookup per byte, no branch. Returns the count written.
    private static func writeLowerHex(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>)
        -> Int
    {
        lowerHexPairs.withUnsafeBufferPointer { pairs in
            var written = 0
            for byte in bytes {
                output[written] = pairs[Int(byte) &* 2]
                output[written + 1] = pairs[Int(byte) &* 2 &+ 1]
                written += 2
            }
            return written
        }
    }

    /// The two lower-case hex digits of every byte value, back to back.
    static let lowerHexPairs: [UInt8] = (0..<256).flatMap { value -> [UInt8] in
        [lowerHex[value >> 4], lowerHex[value & 0x0F]]
    }
}
