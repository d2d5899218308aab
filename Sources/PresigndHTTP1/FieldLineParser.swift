/// Parses field lines (`field-name ":" OWS field-value OWS`, RFC 9112 §5) of a head or a trailer section.
enum FieldLineParser {
    /// Parses the field lines of a head whose start line ends at `from`: `head` holds CRLF-terminated lines,
    /// already checked for bare CR and LF, ending with the empty line.
    static func parseFields(_ head: UnsafeBufferPointer<UInt8>, from: Int) throws(HTTPParseError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        var lineStart = from
        while let lineEnd = lineEnd(head, from: lineStart), lineEnd > lineStart {
            try parse(UnsafeBufferPointer(rebasing: head[lineStart..<lineEnd]), into: &headers)
            lineStart = lineEnd + 2
        }
        return headers
    }

    /// The index of the CR ending the line that starts at `from` (lines are CRLF-terminated and CR is never bare).
    static func lineEnd(_ head: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        var index = from
        while index < head.count {
            if head[index] == ASCII.cr { return index }
            index += 1
        }
        return nil
    }

    /// Parses one field line, without its CRLF, and appends the field.
    static func parse(_ line: UnsafeBufferPointer<UInt8>, into headers: inout HTTPHeaders) throws(HTTPParseError) {
        guard let first = line.first else { throw .invalidHeaderName }
        if ASCII.isWhitespace(first) { throw .obsFold }  // RFC 9112 §5.2; also whitespace after the start line
        var colon = 0
        while colon < line.count, line[colon] != ASCII.colon {
            let byte = line[colon]
            if ASCII.isWhitespace(byte) { throw .whitespaceBeforeColon }  // RFC 9112 §5.1
            guard ASCII.isTokenChar(byte) else { throw .invalidHeaderName }
            colon += 1
        }
        guard colon > 0, colon < line.count else { throw .invalidHeaderName }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, ASCII.isWhitespace(line[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart, ASCII.isWhitespace(line[valueEnd - 1]) { valueEnd -= 1 }
        let name = ASCII.string(line, 0..<colon)
        headers.add(name: name, value: try value(line, valueStart..<valueEnd))
    }

    /// field-value bytes are VCHAR, SP, HTAB or obs-text (RFC 9110 §5.5); NUL, CR, LF, other controls and DEL are
    /// rejected. obs-text must form valid UTF-8, so the String holds exactly the bytes received.
    private static func value(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(HTTPParseError)
        -> String
    {
        var isASCII = true
        for index in range {
            let byte = line[index]
            if byte >= 0x80 {
                isASCII = false
            } else if !(ASCII.isVisible(byte) || ASCII.isWhitespace(byte)) {
                throw .invalidHeaderValue
            }
        }
        if isASCII { return ASCII.string(line, range) }
        guard let string = String(validating: UnsafeBufferPointer(rebasing: line[range]), as: UTF8.self) else {
            throw .invalidHeaderValue
        }
        return string
    }
}
