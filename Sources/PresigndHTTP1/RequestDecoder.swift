/// Decodes requests from a client connection, one after another (keep-alive and pipelining, RFC 9112 §9.3),
/// strictly per RFC 9112. See `DecoderOutput` for the contract with the caller's buffer.
///
/// Choices where the RFC leaves one: bare LF line endings are rejected (§2.2); up to four empty lines before a
/// request line are skipped (§2.2); a 1.x version above 1.1 is read as 1.1 and other majors are 505 (RFC 9110
/// §2.5); identical repeated Content-Length values are accepted and collapsed (RFC 9110 §8.6); the only transfer
/// coding accepted is a lone `chunked` (others 501).
public struct RequestDecoder: Sendable {
    private enum State: Sendable {
        case head
        case body
        case failed(HTTPParseError)
    }

    public let limits: DecoderLimits
    private var state = State.head
    private var reader = HeadReader()
    private var bodyDecoder = BodyDecoder(.none)

    /// How the current request's body is delimited; valid after `.head`.
    public private(set) var framing = BodyFraming.none
    /// The current request is HTTP/1.1 with `Expect: 100-continue` (RFC 9110 §10.1.1; ignored for HTTP/1.0).
    public private(set) var expectsContinue = false
    /// The connection may carry another request after this one (RFC 9112 §9.3).
    public private(set) var isKeepAlive = true

    public init(limits: DecoderLimits = .init()) {
        self.limits = limits
    }

    /// Trailer fields of the current chunked request, complete at `.end`.
    public var trailers: HTTPHeaders { bodyDecoder.trailers }

    /// Whether the decoder is between requests with no byte of a next one seen: the connection may close cleanly.
    public var isIdle: Bool {
        if case .head = state { return reader.isIdle }
        return false
    }

    /// Decodes from `input`, the first contiguous segment of the caller's buffer, which holds `available` bytes
    /// in all. Reads only framing bytes and only from `input`; never consumes more than it reports.
    public mutating func next(_ input: UnsafeRawBufferPointer, available: Int) throws(HTTPParseError)
        -> DecoderOutput
    {
        precondition(available >= input.count, "available counts the whole buffer, input its first segment")
        let bytes = input.assumingMemoryBound(to: UInt8.self)
        do throws(HTTPParseError) {
            switch state {
            case .failed(let error):
                throw error
            case .head:
                let step = try reader.read(bytes, limits: limits, startLineTooLong: .requestLineTooLong) {
                    (head) throws(HTTPParseError) -> ParsedRequest in try Self.parse(head)
                }
                switch step {
                case .needMore(let consumed):
                    return .needMore(consumed: consumed)
                case .complete(let parsed, let consumed):
                    begin(parsed)
                    return .head(parsed.head, consumed: consumed)
                }
            case .body:
                let step = try bodyDecoder.next(bytes, available: available, limits: limits)
                if case .end = step { state = .head }
                return step.output
            }
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func begin(_ parsed: ParsedRequest) {
        framing = parsed.framing
        bodyDecoder = BodyDecoder(parsed.framing)
        expectsContinue = parsed.expectsContinue
        isKeepAlive = parsed.isKeepAlive
        state = .body
    }

    /// Parses a complete head and applies the request rules that need all fields (RFC 9112 §3.2, §6).
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> ParsedRequest {
        let lineEnd = FieldLineParser.lineEnd(bytes, from: 0) ?? bytes.count
        let line = try RequestLineParser.parse(UnsafeBufferPointer(rebasing: bytes[..<lineEnd]))
        var head = RequestHead(method: line.method, target: line.target, version: line.version)
        head.headers = try FieldLineParser.parseFields(bytes, from: lineEnd + 2)
        let hosts = head.headers.count(of: "Host")
        if hosts > 1 { throw .multipleHost }
        if hosts == 0, head.version == .http1_1 { throw .missingHost }
        // RFC 9112 §6.3 (7): a request without Content-Length or Transfer-Encoding has no body.
        let framing = try MessageFraming.bodyFraming(&head.headers, version: head.version) ?? .none
        let expectsContinue =
            head.version == .http1_1
            && head.headers.contains {
                ASCII.equalsIgnoringCase($0.name, "Expect") && ASCII.equalsLowercase($0.value.utf8, "100-continue")
            }
        return ParsedRequest(
            head: head, framing: framing, expectsContinue: expectsContinue,
            isKeepAlive: MessageFraming.isKeepAlive(head.headers, version: head.version))
    }
}

/// A request head with what its fields say about the message (RFC 9112 §6, §9.3; RFC 9110 §10.1.1), as
/// `RequestDecoder` parsed it. A struct, not a tuple: moving it through `HeadReader.Step` is compiled code rather
/// than the runtime's generic tuple witnesses (several hundred instructions a request).
struct ParsedRequest: Sendable {
    let head: RequestHead
    let framing: BodyFraming
    let expectsContinue: Bool
    let isKeepAlive: Bool
}
