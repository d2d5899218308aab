/// Base64 (RFC 4648 §4) and base64url without padding (RFC 4648 §5, as JWS requires: RFC 7515 §2).
public enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// RFC 4648 §4: `+` and `/`, padded with `=` to a multiple of four characters.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes), alphabet: standardAlphabet, pads: true)
    }

    /// RFC 4648 §5: `-` and `_`, no padding (RFC 7515 §2 "Base64url Encoding").
    public static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes), alphabet: urlAlphabet, pads: false)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pads: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            let b0 = UInt32(bytes[index])
            let b1 = count > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = count > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            for position in 0..<4 {
                if position <= count {
                    output.append(alphabet[Int((group >> UInt32(18 - 6 * position)) & 0x3F)])
                } else if pads {
                    output.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
