/// Reading one field of a response head, whichever form the decoder left it in.
extension ResponseHead {
    /// The first value of the field `lowercasedName` (`"date"`, `"retry-after"`), trimmed of spaces and tabs: from
    /// `headers`, or by scanning `rawFields` (the proxy's form) line by line. Nil when absent.
    public func firstValue(ofLowercasedField lowercasedName: String) -> String? {
        if let value = headers[lowercasedName] { return value }
        guard let raw = rawFields else { return nil }
        let name = Array(lowercasedName.utf8)
        var lineStart = 0
        while lineStart < raw.count {
            var lineEnd = lineStart
            while lineEnd < raw.count && raw[lineEnd] != UInt8(ascii: "\r") && raw[lineEnd] != UInt8(ascii: "\n") {
                lineEnd += 1
            }
            let colon = lineStart + name.count
            if colon < lineEnd, raw[colon] == UInt8(ascii: ":"),
                raw[lineStart..<colon].elementsEqual(name, by: { ASCII.lowercased($0) == $1 })
            {
                var valueStart = colon + 1
                var valueEnd = lineEnd
                while valueStart < valueEnd && (raw[valueStart] == 0x20 || raw[valueStart] == 0x09) { valueStart += 1 }
                while valueEnd > valueStart && (raw[valueEnd - 1] == 0x20 || raw[valueEnd - 1] == 0x09) {
                    valueEnd -= 1
                }
                return String(decoding: raw[valueStart..<valueEnd], as: UTF8.self)
            }
            lineStart = lineEnd
            while lineStart < raw.count
                && (raw[lineStart] == UInt8(ascii: "\r") || raw[lineStart] == UInt8(ascii: "\n"))
            {
                lineStart += 1
            }
        }
        return nil
    }
}

extension ResponseHead {
    /// The head with its `rawFields` (the proxy's form) parsed into `headers`, for code that reads many fields at
    /// once (the cache recording an answer); a head without raw fields is returned as it is. The lines were
    /// validated when the head was decoded, so this fails only for a head built by hand.
    public func parsingRawFields() throws(HTTPParseError) -> ResponseHead {
        guard var raw = rawFields else { return self }
        raw.append(contentsOf: [ASCII.cr, ASCII.lf])  // the empty line that ends the field section
        var head = self
        head.rawFields = nil
        head.headers = try raw.withUnsafeBufferPointer { (bytes) throws(HTTPParseError) in
            try FieldLineParser.parseFields(bytes, from: 0)
        }
        return head
    }
}
