import PresigndHTTP1

/// A request's id (`x-presignd-request-id`, logs): the worker's prefix and the request's number, kept as such and
/// formatted only where it is written (the response head gets its bytes without a `String` in between).
struct RequestID {
    /// 9 characters (random + worker): a small string, stored inline.
    let prefix: String
    let counter: UInt64

    /// `prefix` + the counter in upper-case hex, at least 6 digits (15 characters: inline too).
    var text: String { Self.hex(counter, digits: 6, after: prefix) }

    /// Appends `text`'s bytes.
    func append(to bytes: inout [UInt8]) {
        HTTPEncoder.appendUTF8(prefix, into: &bytes)
        Self.forEachHexDigit(counter, minimum: 6) { bytes.append($0) }
    }

    /// `prefix` + `value` in upper-case hex with at least `digits` digits, written in place (one allocation).
    static func hex(_ value: UInt64, digits minimum: Int, after prefix: String = "") -> String {
        let prefix = prefix.utf8
        return String(unsafeUninitializedCapacity: prefix.count + hexDigitCount(value, minimum: minimum)) { buffer in
            var index = 0
            for byte in prefix {
                buffer[index] = byte
                index += 1
            }
            forEachHexDigit(value, minimum: minimum) { digit in
                buffer[index] = digit
                index += 1
            }
            return index
        }
    }

    /// How many digits `forEachHexDigit` gives.
    static func hexDigitCount(_ value: UInt64, minimum: Int) -> Int {
        max(minimum, (UInt64.bitWidth - value.leadingZeroBitCount + 3) / 4)
    }

    /// Hands `value`'s upper-case hex digits to `body`, most significant first, zero-padded to `minimum`.
    @inline(__always)
    static func forEachHexDigit(_ value: UInt64, minimum: Int, _ body: (UInt8) -> Void) {
        var shift = (hexDigitCount(value, minimum: minimum) - 1) * 4
        while shift >= 0 {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
            body(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10)
            shift -= 4
        }
    }
}
