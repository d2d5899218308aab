/// Decodes responses from an upstream connection, one per request sent, strictly per RFC 9112. See
/// `ResponseDecoderOutput` for the contract with the caller's buffer.
///
/// Body length follows RFC 9112 §6.3: no body for a HEAD request or a 1xx, 204 or 304 status; otherwise
/// Transfer-Encoding `chunked`, else Content-Length, else until the connection closes. Content-Length together
/// with Transfer-Encoding is refused rather than resolved (§6.3 (3) allows treating it as an error).
///
/// 1xx interim responses (such as `100 Continue`) are reported as heads (`head.isInterim`) followed by
/// `.end(consumed: 0)`; the final response to the same request follows. A `101` is refused
/// (`unexpectedUpgrade`): presignd never requests an upgrade.
public struct ResponseDecoder: Sendable {
    private enum State: Sendable {
        case head
        case body
        case failed(HTTPParseError)
        case closed
    }

    public let limits: DecoderLimits
    private var state = State.head
    private var reader = HeadReader()
    private var bodyDecoder = BodyDecoder(.none)

    /// How the current response's body is delimited; valid after `.head`.
    public private(set) var framing = BodyFraming.none
    /// The connection may carry another response after this one (RFC 9112 §9.3); false for `.untilClose`.
    public private(set) var isKeepAlive = true
    /// When set, heads carry their end-to-end field lines raw (`ResponseHead.rawFields`) and `headers` stays empty:
    /// the framing fields are read from the bytes and a proxy forwards the lines as received instead of making
    /// two Strings per field. Heads needing normalization or refusal (repeated or listed `Content-Length`, codings
    /// other than a lone `chunked`) come fully parsed, without `rawFields`.
    public var forwardsRawFields = false

    public init(limits: DecoderLimits = .init()) {
        self.limits = limits
    }

    /// Trailer fields of the current chunked response, complete at `.end`.
    public var trailers: HTTPHeaders { bodyDecoder.trailers }

    /// Whether the decoder is between responses with no byte of a next one seen.
    public var isIdle: Bool {
        if case .head = state { return reader.isIdle }
        return false
    }

    /// Decodes from `input`, the first contiguous segment of the caller's buffer, which holds `available` bytes
    /// in all. `requestMethod` is the method of the request this response answers (`HEAD` responses have no body).
    public mutating func next(_ input: UnsafeRawBufferPointer, available: Int, requestMethod: String)
        throws(HTTPParseError) -> ResponseDecoderOutput
    {
        precondition(available >= input.count, "available counts the whole buffer, input its first segment")
        let bytes = input.assumingMemoryBound(to: UInt8.self)
        do throws(HTTPParseError) {
            switch state {
            case .failed(let error):
                throw error
            case .closed:
                throw .invalidStatusLine
            case .head:
                let isHead = requestMethod == "HEAD"
                let raw = forwardsRawFields
                let step = try reader.read(bytes, limits: limits, startLineTooLong: .statusLineTooLong) {
                    (head) throws(HTTPParseError) in try Self.parse(head, isHeadRequest: isHead, raw: raw)
                }
                switch step {
                case .needMore(let consumed):
                    return .needMore(consumed: consumed)
                case .complete(let parsed, let consumed):
                    framing = parsed.framing
                    bodyDecoder = BodyDecoder(parsed.framing)
                    isKeepAlive = parsed.framing != .untilClose && parsed.isKeepAlive
                    state = .body
                    return .head(parsed.head, consumed: consumed)
                }
            case .body:
                let step = try bodyDecoder.next(bytes, available: available, limits: limits)
                if case .end = step { state = .head }
                return step.responseOutput
            }
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Reports the connection's end of input: true when it cleanly ends an `.untilClose` body (RFC 9112 §6.3
    /// (8)); false when it cuts a head or a delimited body short. Between responses nothing is cut: false too, as
    /// no body ended. The decoder accepts nothing afterwards.
    public mutating func finishOnClose() -> Bool {
        defer { state = .closed }
        if case .body = state { return bodyDecoder.isUntilClose }
        return false
    }

    private struct Parsed {
        var head: ResponseHead
        var framing: BodyFraming
        /// RFC 9112 §9.3 from the Connection fields and the version (`untilClose` bodies end it regardless).
        var isKeepAlive: Bool
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, isHeadRequest: Bool, raw: Bool)
        throws(HTTPParseError) -> Parsed
    {
        let lineEnd = FieldLineParser.lineEnd(bytes, from: 0) ?? bytes.count
        let line = try StatusLineParser.parse(UnsafeBufferPointer(rebasing: bytes[..<lineEnd]))
        var head = ResponseHead(version: line.version, status: line.status, reason: line.reason)
        let fieldsStart = min(lineEnd + 2, bytes.count)
        if head.status == 101 {
            // Validated like any head first: a malformed one reports what is wrong with it.
            _ = try FieldLineParser.parseFields(bytes, from: fieldsStart)
            throw .unexpectedUpgrade
        }
        // RFC 9112 §6.3 (1): HEAD, 1xx, 204 and 304 responses end at the head, whatever their fields say.
        let hasNoBody = isHeadRequest || head.isInterim || head.status == 204 || head.status == 304
        if raw {
            var fields = FieldLineParser.ForwardedFraming()
            let endToEnd = try FieldLineParser.parseForwardedFields(bytes, from: fieldsStart, framing: &fields)
            if fields.isPlain(version: head.version) {
                head.rawFields = endToEnd
                let isKeepAlive = !fields.close && (head.version != .http1_0 || fields.keepAlive)
                let framing: BodyFraming
                if hasNoBody {
                    framing = .none
                } else if fields.transferEncodingFields > 0 {
                    framing = .chunked
                } else if let length = fields.contentLength {
                    framing = .contentLength(length)
                } else {
                    framing = .untilClose
                }
                return Parsed(head: head, framing: framing, isKeepAlive: isKeepAlive)
            }
            // Repeated or listed lengths are normalized (and conflicts refused) by the full rules below: the
            // normalized fields are forwarded instead of the raw lines.
        }
        head.headers = try FieldLineParser.parseFields(bytes, from: fieldsStart)
        let isKeepAlive = MessageFraming.isKeepAlive(head.headers, version: head.version)
        if hasNoBody { return Parsed(head: head, framing: .none, isKeepAlive: isKeepAlive) }
        let framing = try MessageFraming.bodyFraming(&head.headers, version: head.version) ?? .untilClose
        return Parsed(head: head, framing: framing, isKeepAlive: isKeepAlive)
    }
}
