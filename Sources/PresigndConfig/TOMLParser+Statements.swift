/// Keys, `[table]` / `[[array]]` headers and `key = value` lines.
extension TOMLParser {
    /// A bare, quoted or dotted key: `name`, `"a b"`, `a.b.c`.
    mutating func parseKey() throws(TOMLParseFailure) -> [TOMLKey] {
        var components: [TOMLKey] = []
        while true {
            skipSpaces()
            let start = position
            switch peek() {
            case UInt8(ascii: "\"")?:
                components.append(TOMLKey(name: try parseBasicString(), position: start))
            case UInt8(ascii: "'")?:
                components.append(TOMLKey(name: try parseLiteralString(), position: start))
            default:
                let from = index
                while let byte = peek(), Self.isBareKeyByte(byte) { advance() }
                guard index > from else { throw TOMLParseFailure(start, "expected a key") }
                components.append(TOMLKey(name: String(decoding: bytes[from..<index], as: UTF8.self), position: start))
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return components }
            advance()
        }
    }

    /// `[a.b]` or `[[a.b]]`; makes it the table that following key/value lines go into.
    mutating func parseHeader() throws(TOMLParseFailure) {
        let start = position
        currentPath = nil  // until the header is known to be good
        advance()
        let isArray = peek() == UInt8(ascii: "[")
        if isArray { advance() }
        let path = try parseKey()
        let closing = isArray ? "]]" : "]"
        for byte in closing.utf8 {
            guard peek() == byte else { throw failure("expected '\(closing)' to close the table header") }
            advance()
        }
        let name = path.map(\.name).joined(separator: ".")
        guard let last = path.last else { throw TOMLParseFailure(start, "expected a key") }
        try root.withTable(at: path.dropLast(), creating: .implicit) { (table) throws(TOMLParseFailure) in
            if isArray {
                try table.appendArrayElement(last, header: name, at: start)
            } else {
                try table.defineHeaderTable(last, header: name, at: start)
            }
        }
        currentPath = path
    }

    /// `key = value` in the current table. A value that fails to parse still claims its key (as `.invalid`), so
    /// the decoder neither calls the key missing nor reports the mistake twice.
    mutating func parseKeyValue() throws(TOMLParseFailure) {
        let key = try parseKey()
        skipSpaces()
        guard peek() == UInt8(ascii: "=") else { throw failure("expected '=' after the key") }
        advance()
        skipSpaces()
        let valuePosition = position
        let value: TOMLValue
        do {
            value = try parseValue()
        } catch {
            try? insert(key, TOMLValue(.invalid, at: valuePosition))
            throw error
        }
        try insert(key, value)
    }

    private mutating func insert(_ key: [TOMLKey], _ value: TOMLValue) throws(TOMLParseFailure) {
        guard let path = currentPath else { return }  // after a broken header: checked, then dropped
        try root.withTable(at: ArraySlice(path), creating: .implicit) { (table) throws(TOMLParseFailure) in
            try table.insert(key, value)
        }
    }
}
