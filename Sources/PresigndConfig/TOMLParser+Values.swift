/// Values: booleans, arrays and inline tables (strings and integers have their own files).
extension TOMLParser {
    mutating func parseValue() throws(TOMLParseFailure) -> TOMLValue {
        let start = position
        guard let byte = peek(), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else {
            throw failure("expected a value after '='")
        }
        switch byte {
        case UInt8(ascii: "\""):
            return TOMLValue(.string(try parseBasicString()), at: start)
        case UInt8(ascii: "'"):
            return TOMLValue(.string(try parseLiteralString()), at: start)
        case UInt8(ascii: "["):
            return TOMLValue(.array(try parseArray()), at: start)
        case UInt8(ascii: "{"):
            return TOMLValue(.table(try parseInlineTable()), at: start)
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return TOMLValue(.integer(try parseInteger()), at: start)
        default:
            for (word, value) in [("true", true), ("false", false)] where matchesWord(word) {
                index += word.utf8.count
                return TOMLValue(.boolean(value), at: start)
            }
            // Never quote the text: an unquoted secret would end up in the log.
            throw failure(
                "expected a value (a quoted string, an integer, true, false, an array or an inline table); "
                    + "strings must be quoted")
        }
    }

    private func matchesWord(_ word: String) -> Bool {
        let count = word.utf8.count
        guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(word.utf8) else { return false }
        return Self.isDelimiter(peek(count))
    }

    /// `[a, b, ...]`, across lines, with comments and a trailing comma allowed.
    mutating func parseArray() throws(TOMLParseFailure) -> [TOMLValue] {
        advance()
        depth += 1
        var values: [TOMLValue] = []
        while true {
            try skipBlankSpace()
            if peek() == UInt8(ascii: "]") { break }
            values.append(try parseValue())
            try skipBlankSpace()
            if peek() == UInt8(ascii: ",") {
                advance()
                continue
            }
            guard peek() == UInt8(ascii: "]") else { throw failure("expected ',' or ']' in the array") }
            break
        }
        advance()
        depth -= 1
        return values
    }

    /// `{ key = value, ... }` on one line; sealed once closed.
    mutating func parseInlineTable() throws(TOMLParseFailure) -> TOMLTable {
        var table = TOMLTable(origin: .inline, position: position)
        advance()
        depth += 1
        skipSpaces()
        while peek() != UInt8(ascii: "}") {
            let key = try parseKey()
            guard peek() == UInt8(ascii: "=") else { throw failure("expected '=' after the key") }
            advance()
            skipSpaces()
            try table.insert(key, try parseValue())
            skipSpaces()
            if peek() == UInt8(ascii: ",") {
                advance()
                skipSpaces()
            } else if peek() != UInt8(ascii: "}") {
                throw failure("expected ',' or '}' in the inline table (inline tables stay on one line)")
            }
        }
        advance()
        depth -= 1
        return table
    }
}
