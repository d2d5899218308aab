/// Byte-level cursor movement: positions, whitespace, comments and line ends.
extension TOMLParser {
    var position: SourcePosition {
        var column = 1
        var cursor = lineStart
        while cursor < index {
            // Count UTF-8 lead bytes only, so columns are in characters (scalars).
            if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
            cursor += 1
        }
        return SourcePosition(line: line, column: column)
    }

    func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    mutating func advance() {
        index += 1
    }

    func failure(_ message: String) -> TOMLParseFailure {
        TOMLParseFailure(position, message)
    }

    /// Skips spaces and tabs (TOML whitespace), not newlines.
    mutating func skipSpaces() {
        while let byte = peek(), byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
            advance()
        }
    }

    /// Skips a `#` comment up to (not including) the line end.
    mutating func skipComment() {
        while let byte = peek(), byte != UInt8(ascii: "\n") {
            advance()
        }
    }

    /// Consumes `\n` or `\r\n`. A lone `\r` is an error (TOML 1.0 §Spec: newline is LF or CRLF).
    mutating func consumeNewline() throws(TOMLParseFailure) {
        if peek() == UInt8(ascii: "\r") {
            guard peek(1) == UInt8(ascii: "\n") else { throw failure("carriage return without a line feed") }
            advance()
        }
        guard peek() == UInt8(ascii: "\n") else { return }
        advance()
        line += 1
        lineStart = index
    }

    /// Skips whitespace, newlines and comments, as allowed between array elements.
    mutating func skipBlankSpace() throws(TOMLParseFailure) {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"): advance()
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): try consumeNewline()
            case UInt8(ascii: "#"): skipComment()
            default: return
            }
        }
    }

    /// After a statement: optional spaces and comment, then a line end or the end of the file.
    mutating func expectEndOfLine() throws(TOMLParseFailure) {
        skipSpaces()
        if peek() == UInt8(ascii: "#") { skipComment() }
        guard let byte = peek() else { return }
        guard byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") else {
            throw failure("unexpected text after the statement; expected a comment or the end of the line")
        }
        try consumeNewline()
    }

    /// Moves past the next line feed (or to the end of the file).
    mutating func skipToNextLine() {
        while let byte = peek() {
            advance()
            if byte == UInt8(ascii: "\n") {
                line += 1
                lineStart = index
                return
            }
        }
    }

    /// Whether `byte` ends a bare word such as `true`.
    static func isDelimiter(_ byte: UInt8?) -> Bool {
        guard let byte else { return true }
        return " \t\r\n,]}#".utf8.contains(byte)
    }

    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
