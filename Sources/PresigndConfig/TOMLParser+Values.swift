/// Values: booleans, integers, arrays and inline tables (strings are in `TOMLParser+Strings.swift`).
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
            throw failure("expected a value (a quoted string, an integer, true, false, an array or an inline table); "
                + "strings must be quoted")
        }
    }

    private func matchesWord(_ word: String) -> Bool {
        let count = word.utf8.count
        guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(word.utf8) else { return false }
        return Self.isDelimiter(peek(count))
    }

    /// Decimal with `_` between digits and an optional sign, or `0x`/`0o`/`0b` (TOML 1.0 §Integer).
    mutating func parseInteger() throws(TOMLParseFailure) -> Int {
        let start = position
        let from = index
        while let byte = peek(), !Self.isDelimiter(byte) { advance() }
        var token = Array(bytes[from..<index])
        let isNegative = token.first == UInt8(ascii: "-")
        if token.first == UInt8(ascii: "-") || token.first == UInt8(ascii: "+") { token.removeFirst() }
        var radix = 10
        if token.count > 2, token[0] == UInt8(ascii: "0"), from == index - token.count {
            switch token[1] {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: break
            }
            if radix != 10 { token.removeFirst(2) }
        }
        if radix == 10 {
            if token.contains(where: { $0 == UInt8(ascii: ":") }) || (token.count > 4 && token[4] == UInt8(ascii: "-")) {
                throw TOMLParseFailure(start, "dates and times are not supported; use a string")
            }
            if token.contains(where: { ".eE".utf8.contains($0) }) && !token.isEmpty
                && token.allSatisfy({ "0123456789_.eE+-".utf8.contains($0) }) {
                throw TOMLParseFailure(start, "floating-point numbers are not supported; use an integer or a string")
            }
            if token.count > 1, token[0] == UInt8(ascii: "0") {
                throw TOMLParseFailure(
                    start, "leading zeros are not allowed in integers (write octal as 0o660, or as a string \"0660\")")
            }
        }
        var value = 0
        var previousWasDigit = false
        for byte in token {
            if byte == UInt8(ascii: "_") {
                guard previousWasDigit else { throw TOMLParseFailure(start, "misplaced '_' in integer") }
                previousWasDigit = false
                continue
            }
            guard let digit = Self.digitValue(byte), digit < radix else {
                throw TOMLParseFailure(start, "invalid integer")
            }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: radix)
            let (sum, overflow2) = shifted.addingReportingOverflow(isNegative ? -digit : digit)
            guard !overflow1, !overflow2 else { throw TOMLParseFailure(start, "integer is out of range") }
            value = sum
            previousWasDigit = true
        }
        guard previousWasDigit else { throw TOMLParseFailure(start, token.isEmpty ? "invalid integer" : "misplaced '_' in integer") }
        return value
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
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
