/// Parses field lines (`field-name ":" OWS field-value OWS`, RFC 9112 §5) of a head or a trailer section.
enum FieldLineParser {
    /// Parses and validates the field lines of a head whose start line ends at `from`: `head` holds CRLF-terminated
    /// lines, already checked for bare CR and LF, ending with the empty line.
    static func parseFields(_ head: UnsafeBufferPointer<UInt8>, from: Int) throws(HTTPParseError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(16)  // one allocation for a typical head, not regrowing
        var lineStart = from
        while let field = try nextField(head, from: lineStart) {
            headers.add(name: ASCII.internedString(head, field.name), value: ASCII.internedString(head, field.value))
            lineStart = field.next
        }
        return headers
    }

    /// What a proxy forwarding a response head needs from its framing fields (Content-Length,
    /// Transfer-Encoding, Connection), gathered from the bytes while `parseForwardedFields` validates and copies
    /// the lines: no `String` and no `HTTPHeaders` for them.
    struct ForwardedFraming {
        var contentLengthFields = 0
        /// The last Content-Length value when it is a plain number (1 to 18 digits, nothing else).
        var contentLength: Int?
        var transferEncodingFields = 0
        /// The (single) Transfer-Encoding value is exactly one list element, `chunked` in any case.
        var isChunked = false
        /// A Connection field names `close` / `keep-alive`.
        var close = false
        var keepAlive = false
        /// A Connection field names other fields, which must not be forwarded: left to the full rules.
        var namesOtherFields = false

        /// Framing the fast path decides alone: no Transfer-Encoding and at most one plain Content-Length, or a
        /// lone `Transfer-Encoding: chunked` without Content-Length outside HTTP/1.0. Anything else (repeated or
        /// listed lengths, other codings, both fields, chunked in HTTP/1.0) is left to the full rules
        /// (`MessageFraming.bodyFraming`), which normalize or refuse it.
        func isPlain(version: HTTPVersion) -> Bool {
            if namesOtherFields { return false }
            if transferEncodingFields == 0 {
                return contentLengthFields == 0 || (contentLengthFields == 1 && contentLength != nil)
            }
            return transferEncodingFields == 1 && isChunked && contentLengthFields == 0 && version != .http1_0
        }
    }

    /// `parseFields` for a proxy that forwards a response head: every line is validated, the end-to-end lines
    /// (all but `ResponseHead.isHopByHopField`) are copied as received, CRLFs included, consecutive ones in one
    /// copy, and the framing fields are read into `framing`. One pass over the head: the forwarding side appends
    /// the lines without looking at them again.
    static func parseForwardedFields(
        _ head: UnsafeBufferPointer<UInt8>, from: Int, framing: inout ForwardedFraming
    ) throws(HTTPParseError) -> [UInt8] {
        var endToEnd: [UInt8] = []
        endToEnd.reserveCapacity(max(0, head.count - from))
        var keptFrom = from
        var lineStart = from
        while let field = try nextField(head, from: lineStart) {
            let name = UnsafeBufferPointer(rebasing: head[field.name])
            let value = UnsafeBufferPointer(rebasing: head[field.value])
            switch name.count {
            case 10 where ASCII.equalsLowercase(name, "connection"):
                if HTTPHeaders.listContains(value, token: "close") { framing.close = true }
                if HTTPHeaders.listContains(value, token: "keep-alive") { framing.keepAlive = true }
                if HTTPHeaders.listNamesForwardedField(value) { framing.namesOtherFields = true }
            case 14 where ASCII.equalsLowercase(name, "content-length"):
                framing.contentLengthFields += 1
                framing.contentLength = MessageFraming.plainDecimal(value)
            case 17 where ASCII.equalsLowercase(name, "transfer-encoding"):
                framing.transferEncodingFields += 1
                framing.isChunked = ASCII.equalsLowercase(value, "chunked")
            default:
                break
            }
            if ResponseHead.isHopByHopField(name) {
                endToEnd.append(contentsOf: UnsafeBufferPointer(rebasing: head[keptFrom..<lineStart]))
                keptFrom = field.next
            }
            lineStart = field.next
        }
        endToEnd.append(contentsOf: UnsafeBufferPointer(rebasing: head[keptFrom..<max(keptFrom, lineStart)]))
        return endToEnd
    }

    /// Validates the field line of `head` that starts at `from`, as `split` does, and locates its name, its value
    /// (OWS trimmed) and the start of the next line; nil at the head's empty line. `head` is a head the
    /// `HeadReader` accepted (CRLF line ends, no bare CR or LF), so the first CR after the colon ends the line: the
    /// value's byte check finds it, and the line is read once instead of being scanned for its end first.
    @inline(__always)
    static func nextField(_ head: UnsafeBufferPointer<UInt8>, from start: Int) throws(HTTPParseError)
        -> (name: Range<Int>, value: Range<Int>, next: Int)?
    {
        guard start < head.count, head[start] != ASCII.cr else { return nil }
        let colon = try nameEnd(head, from: start, before: head.count)
        let valueStart = skipWhitespace(head, from: colon + 1, before: head.count)
        let (lineEnd, isASCII) = try scanValue(head, from: valueStart)
        let value = try trimmedValue(head, valueStart..<lineEnd, isASCII: isASCII)
        return (start..<colon, value, lineEnd + 2)
    }

    /// The index of the colon ending the field name that starts at `start` (a line ending before `end`): throws
    /// for obs-fold, whitespace before the colon, an empty name or a non-token byte (RFC 9112 §5.1, §5.2).
    @inline(__always)
    static func nameEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, before end: Int) throws(HTTPParseError)
        -> Int
    {
        guard start < end else { throw .invalidHeaderName }
        if ASCII.isWhitespace(bytes[start]) { throw .obsFold }  // RFC 9112 §5.2; also whitespace after the start line
        // Token bytes; the byte that stops the run decides (a colon ends the name).
        var colon = start + skipNameWords(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        while colon < end, ASCII.isTokenByte(bytes[colon]) { colon += 1 }
        guard colon < end, bytes[colon] == ASCII.colon else {
            if colon < end, ASCII.isWhitespace(bytes[colon]) { throw .whitespaceBeforeColon }  // RFC 9112 §5.1
            throw .invalidHeaderName
        }
        guard colon > start else { throw .invalidHeaderName }
        return colon
    }

    /// The first index in `from..<end` that is not SP or HTAB, or `end`.
    @inline(__always)
    static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, before end: Int) -> Int {
        var index = from
        while index < end, ASCII.isWhitespace(bytes[index]) { index += 1 }
        return index
    }

    /// `value` (checked field-value bytes, `isASCII` when none is obs-text) without trailing OWS; throws when its
    /// obs-text is not UTF-8: values become Strings, and forwarded raw bytes are the same bytes.
    @inline(__always)
    static func trimmedValue(_ bytes: UnsafeBufferPointer<UInt8>, _ value: Range<Int>, isASCII: Bool)
        throws(HTTPParseError) -> Range<Int>
    {
        var end = value.upperBound
        while end > value.lowerBound, ASCII.isWhitespace(bytes[end - 1]) { end -= 1 }
        if !isASCII,
            String(validating: UnsafeBufferPointer(rebasing: bytes[value.lowerBound..<end]), as: UTF8.self) == nil
        {
            throw .invalidHeaderValue
        }
        return value.lowerBound..<end
    }

    /// From `start` to the CR that ends the line: throws unless every byte is a field-value byte (VCHAR, SP, HTAB,
    /// obs-text), and returns the CR's index and whether all bytes are ASCII. Word at a time as `checkValueBytes`;
    /// a flagged word (the CR, HTAB, obs-text or an invalid byte) is decided bytewise.
    @inline(__always)
    static func scanValue(_ head: UnsafeBufferPointer<UInt8>, from start: Int) throws(HTTPParseError)
        -> (lineEnd: Int, isASCII: Bool)
    {
        var highBits: UInt8 = 0
        var index = start
        while true {
            var stop = head.count
            if index + 8 <= head.count, let base = head.baseAddress {
                if isPrintableASCII(UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                    index += 8
                    continue
                }
                stop = index + 8
            }
            guard index < stop else { throw .invalidHeaderValue }  // no CR: not a head the reader accepted
            while index < stop {
                let byte = head[index]
                if byte == ASCII.cr { return (index, highBits < 0x80) }
                guard ASCII.isFieldValueByte(byte) else { throw .invalidHeaderValue }
                highBits |= byte
                index += 1
            }
        }
    }

    /// The index of the CR ending the line that starts at `from` (lines are CRLF-terminated and CR is never bare).
    static func lineEnd(_ head: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        // The head reader's word-at-a-time scan; a head it accepted has no bare LF, so the break is the CR.
        let index = HeadReader.skipToLineBreak(head, from: from, before: head.count)
        return index < head.count ? index : nil
    }

    /// Validates one field line (without its CRLF) and adds it to `headers`.
    static func parse(_ line: UnsafeBufferPointer<UInt8>, into headers: inout HTTPHeaders) throws(HTTPParseError) {
        let field = try split(line)
        headers.add(name: ASCII.internedString(line, field.name), value: ASCII.internedString(line, field.value))
    }

    /// Validates one field line and locates its name and its value (OWS trimmed). field-value bytes are VCHAR,
    /// SP, HTAB or obs-text (RFC 9110 §5.5); NUL, CR, LF, other controls and DEL are rejected. obs-text must
    /// form valid UTF-8, so a String made from the value (or the raw bytes forwarded) hold exactly what arrived.
    static func split(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError)
        -> (name: Range<Int>, value: Range<Int>)
    {
        let colon = try nameEnd(line, from: 0, before: line.count)
        let valueStart = skipWhitespace(line, from: colon + 1, before: line.count)
        // field-value bytes: VCHAR, SP, HTAB, obs-text (RFC 9110 §5.5); trailing OWS is among them.
        let isASCII = try checkValueBytes(line, valueStart..<line.count)
        return (0..<colon, try trimmedValue(line, valueStart..<line.count, isASCII: isASCII))
    }

    /// Throws unless every byte in `range` is a field-value byte (VCHAR, SP, HTAB, obs-text); returns whether all are
    /// ASCII. Eight bytes at a time: a word of printable ASCII (no high bit, no byte below SP, no DEL) passes in a
    /// few operations; any other word (HTAB, obs-text, or an invalid byte) gets the bytewise check. The word tests
    /// are exact about whether such a byte exists (a borrow only starts at one), so no invalid byte slips through.
    @inline(__always)
    static func checkValueBytes(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) throws(HTTPParseError)
        -> Bool
    {
        var highBits: UInt8 = 0
        var index = range.lowerBound
        if let base = line.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= range.upperBound {
                if !isPrintableASCII(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                    for byte in UnsafeBufferPointer(rebasing: line[index..<(index + 8)]) {
                        guard ASCII.isFieldValueByte(byte) else { throw .invalidHeaderValue }
                        highBits |= byte
                    }
                }
                index += 8
            }
        }
        while index < range.upperBound {
            let byte = line[index]
            guard ASCII.isFieldValueByte(byte) else { throw .invalidHeaderValue }
            highBits |= byte
            index += 1
        }
        return highBits < 0x80
    }

    /// Whether all eight bytes of `word` are printable ASCII (SP through `~`: no high bit, no byte below SP, no
    /// DEL). Exact: a borrow only starts at a byte that fails, so no failing byte hides behind another.
    @inline(__always)
    static func isPrintableASCII(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let del = word ^ (ones &* 0x7F)
        let belowSpace = (word &- ones &* UInt64(ASCII.space)) & ~word
        let isDel = (del &- ones) & ~del
        return (word | belowSpace | isDel) & 0x8080_8080_8080_8080 == 0
    }

    /// How many leading bytes of `line`, in whole words of eight, are letters, digits or `-` (the bytes of nearly
    /// every field name, all token bytes): where the bytewise token loop may start. Per byte in a word of 7-bit
    /// bytes, `(x | 0x80) - lo` keeps its high bit iff x >= lo and `(hi | 0x80) - x` iff x <= hi, with no borrow
    /// into the next byte; a word with any other byte (or a high bit) stops the skip.
    @inline(__always)
    static func skipNameWords(_ line: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = line.baseAddress else { return 0 }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func atLeast(_ x: UInt64, _ low: UInt64) -> UInt64 { ((x | highs) &- ones &* low) & highs }
        @inline(__always) func atMost(_ x: UInt64, _ high: UInt64) -> UInt64 { ((ones &* high | highs) &- x) & highs }
        var index = 0
        while index + 8 <= line.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if word & highs != 0 { break }
            let digit = atLeast(word, 0x30) & atMost(word, 0x39)
            let folded = word | ones &* 0x20
            let letter = atLeast(folded, 0x61) & atMost(folded, 0x7A)
            let dashXor = word ^ ones &* 0x2D
            let dash = ~((dashXor | highs) &- ones) & highs
            if digit | letter | dash != highs { break }
            index += 8
        }
        return index
    }
}
