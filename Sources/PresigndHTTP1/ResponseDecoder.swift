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
    /// When set, heads carry their end-to-end field lines raw (`ResponseHead.rawFields`) and `headers` holds only
    /// `Content-Length`, `Transfer-Encoding` and `Connection`: a proxy forwards the rest as received
    /// instead of making two Strings per field. Heads needing normalization (repeated `Content-Length`)
    /// come fully parsed, without `rawFields`.
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
                    isKeepAlive =
                        parsed.framing != .untilClose
                        && MessageFraming.isKeepAlive(parsed.head.headers, version: parsed.head.version)
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

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, isHeadRequest: Bool, raw: Bool)
        throws(HTTPParseError) -> (head: ResponseHead, framing: BodyFraming)
    {
        let lineEnd = FieldLineParser.lineEnd(bytes, from: 0) ?? bytes.count
        let line = try StatusLineParser.parse(UnsafeBufferPointer(rebasing: bytes[..<lineEnd]))
        var head = ResponseHead(version: line.version, status: line.status, reason: line.reason)
        let fieldsStart = min(lineEnd + 2, bytes.count)
        if raw {
            let fields = try FieldLineParser.parseForwardedFields(bytes, from: fieldsStart, keeping: isFramingField)
            head.headers = fields.headers
            if head.headers.count(of: "Content-Length") > 1 {
                // Repeated Content-Length is collapsed below: forward the normalized fields instead.
                head.headers = try FieldLineParser.parseFields(bytes, from: fieldsStart)
            } else {
                head.rawFields = fields.endToEnd
            }
        } else {
            head.headers = try FieldLineParser.parseFields(bytes, from: fieldsStart)
        }
        if head.status == 101 { throw .unexpectedUpgrade }
        // RFC 9112 §6.3 (1): HEAD, 1xx, 204 and 304 responses end at the head, whatever their fields say.
        if isHeadRequest || head.isInterim || head.status == 204 || head.status == 304 {
            return (head, .none)
        }
        let framing = try MessageFraming.bodyFraming(&head.headers, version: head.version) ?? .untilClose
        return (head, framing)
    }

    /// The fields a raw-forwarding decoder still parses: they frame the message or decide keep-alive.
    private static func isFramingField(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 10: ASCII.equalsLowercase(name, "connection")
        case 14: ASCII.equalsLowercase(name, "content-length")
        case 17: ASCII.equalsLowercase(name, "transfer-encoding")
        default: false
        }
    }
}
