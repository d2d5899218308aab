/// Basic (`"..."`, with escapes) and literal (`'...'`) single-line strings.
extension TOMLParser {
    /// A basic string with the escapes `\" \\ \b \t \n \f \r \e \uXXXX \UXXXXXXXX` (TOML 1.0 §String).
    mutating func parseBasicString() throws(TOMLParseFailure) -> String {
        let start = position
        if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
            throw failure("multi-line strings are not supported")
        }
        advance()
        var result: [UInt8] = []
        while true {
            guard let byte = peek(), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else {
                throw TOMLParseFailure(start, "unterminated string")
            }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &result)
            case 0x00..<0x20 where byte != UInt8(ascii: "\t"), 0x7F:
                throw failure("control character in string; use an escape sequence")
            default:
                result.append(byte)
                advance()
            }
        }
    }

    private mutating func parseEscape(into result: inout [UInt8]) throws(TOMLParseFailure) {
        let escapePosition = position
        advance()
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "\""): UInt8(ascii: "\""), UInt8(ascii: "\\"): UInt8(ascii: "\\"),
            UInt8(ascii: "b"): 0x08, UInt8(ascii: "t"): 0x09, UInt8(ascii: "n"): 0x0A,
            UInt8(ascii: "f"): 0x0C, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "e"): 0x1B,
        ]
        // The escaped character is not quoted in messages: the string could be a secret.
        let invalid = TOMLParseFailure(
            escapePosition, "invalid escape sequence in string (valid: \\\" \\\\ \\n \\t \\r \\uXXXX \\UXXXXXXXX)")
        guard let letter = peek() else { throw invalid }
        if let replacement = simple[letter] {
            result.append(replacement)
            advance()
            return
        }
        let digits: Int
        switch letter {
        case UInt8(ascii: "u"): digits = 4
        case UInt8(ascii: "U"): digits = 8
        default: throw invalid
        }
        advance()
        var code: UInt32 = 0
        for _ in 0..<digits {
            guard let byte = peek(), let digit = UInt32(String(UnicodeScalar(byte)), radix: 16) else { throw invalid }
            code = code * 16 + digit
            advance()
        }
        guard let scalar = Unicode.Scalar(code) else {
            throw TOMLParseFailure(escapePosition, "escape sequence is not a Unicode scalar value")
        }
        result.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    /// A literal string: no escapes, ends at the next `'`.
    mutating func parseLiteralString() throws(TOMLParseFailure) -> String {
        let start = position
        if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
            throw failure("multi-line strings are not supported")
        }
        advance()
        let from = index
        while let byte = peek(), byte != UInt8(ascii: "'") {
            guard byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else { break }
            guard byte >= 0x20 || byte == UInt8(ascii: "\t"), byte != 0x7F else {
                throw failure("control character in string")
            }
            advance()
        }
        guard peek() == UInt8(ascii: "'") else { throw TOMLParseFailure(start, "unterminated string") }
        let text = String(decoding: bytes[from..<index], as: UTF8.self)
        advance()
        return text
    }
}
