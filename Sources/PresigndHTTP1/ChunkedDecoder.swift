/// Decodes the chunked transfer coding (RFC 9112 §7.1) incrementally: it reads chunk-size lines, the CRLF after
/// each chunk's data and the trailer section from the caller's first segment, and only counts chunk data.
///
/// `chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF`, `last-chunk = 1*"0" [ chunk-ext ] CRLF`, then
/// `trailer-section CRLF`. Chunk extensions are allowed (aws-chunked puts its signatures there) but bounded by
/// `maxChunkLineBytes` and not interpreted.
struct ChunkedDecoder: Sendable {
    private enum State: Sendable, Equatable {
        case size, sizeWhitespace, extensions, sizeLF
        case data(remaining: Int)
        case dataCR, dataLF
        case trailer
        case done
    }

    private var state: State = .size
    private var size = 0
    private var sizeDigits = 0
    private var lineBytes = 0
    private var trailerLine: [UInt8] = []
    private var trailerBytes = 0
    /// Trailer fields of the message, complete at `.end` (RFC 9112 §7.1.2). Not merged into the head.
    private(set) var trailers = HTTPHeaders()
    /// Chunk data bytes counted so far in this message.
    private(set) var decodedByteCount = 0

    var isDone: Bool { state == .done }

    mutating func next(_ input: UnsafeBufferPointer<UInt8>, available: Int, limits: DecoderLimits)
        throws(HTTPParseError) -> BodyStep
    {
        var position = 0
        while true {
            if case .data(let remaining) = state {
                let count = min(remaining, available - position)
                guard count > 0 else { return .needMore(consumed: position) }
                state = remaining == count ? .dataCR : .data(remaining: remaining - count)
                decodedByteCount += count
                return .body(skip: position, count: count)
            }
            guard position < input.count else { return .needMore(consumed: position) }
            try consume(input[position], limits: limits)
            position += 1
            if state == .done { return .end(consumed: position) }
        }
    }

    /// Advances the framing state machine over one byte.
    private mutating func consume(_ byte: UInt8, limits: DecoderLimits) throws(HTTPParseError) {
        switch state {
        case .size, .sizeWhitespace, .extensions:
            lineBytes += 1
            if byte != ASCII.cr, lineBytes > limits.maxChunkLineBytes { throw .chunkLineTooLong }
            try consumeSizeLine(byte)
        case .sizeLF:
            guard byte == ASCII.lf else { throw .invalidChunkFraming }
            state = size == 0 ? .trailer : .data(remaining: size)
            (size, sizeDigits, lineBytes) = (0, 0, 0)
        case .dataCR:
            guard byte == ASCII.cr else { throw .invalidChunkFraming }  // RFC 9112 §7.1: chunk-data CRLF
            state = .dataLF
        case .dataLF:
            guard byte == ASCII.lf else { throw .invalidChunkFraming }
            state = .size
        case .trailer:
            try consumeTrailer(byte, limits: limits)
        case .data, .done:
            preconditionFailure("no framing byte is read in this state")
        }
    }

    /// `chunk-size [ chunk-ext ] CRLF` with `chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )`
    /// (RFC 9112 §7.1.1). Extension bytes may be anything but controls other than HTAB.
    private mutating func consumeSizeLine(_ byte: UInt8) throws(HTTPParseError) {
        if state == .extensions {
            if byte == ASCII.cr {
                state = .sizeLF
            } else if byte == 0x7F || (byte < 0x20 && byte != ASCII.tab) {
                throw .invalidChunkExtension
            }
            return
        }
        if state == .size, let digit = ASCII.hexValue(byte) {
            let (shifted, o1) = size.multipliedReportingOverflow(by: 16)
            let (sum, o2) = shifted.addingReportingOverflow(digit)
            guard !o1, !o2 else { throw .chunkSizeOverflow }
            (size, sizeDigits) = (sum, sizeDigits + 1)
            return
        }
        guard sizeDigits > 0 else { throw .invalidChunkSize }
        switch byte {
        case ASCII.space, ASCII.tab: state = .sizeWhitespace  // BWS before ";"
        case ASCII.semicolon: state = .extensions
        case ASCII.cr: state = .sizeLF
        default: throw .invalidChunkSize
        }
    }

    /// `trailer-section = *( field-line CRLF )` then CRLF (RFC 9112 §7.1.2), parsed like head fields.
    private mutating func consumeTrailer(_ byte: UInt8, limits: DecoderLimits) throws(HTTPParseError) {
        trailerBytes += 1
        guard trailerBytes <= limits.maxTrailerBytes else { throw .trailerTooLarge }
        guard byte == ASCII.lf else {
            if trailerLine.last == ASCII.cr { throw .bareCarriageReturn }
            trailerLine.append(byte)
            return
        }
        guard trailerLine.last == ASCII.cr else { throw .bareLineFeed }
        trailerLine.removeLast()
        if trailerLine.isEmpty {
            state = .done
            return
        }
        let result: Result<Void, HTTPParseError> = trailerLine.withUnsafeBufferPointer { line in
            Result { () throws(HTTPParseError) in try FieldLineParser.parse(line, into: &trailers) }
        }
        try result.get()
        trailerLine.removeAll(keepingCapacity: true)
    }
}
