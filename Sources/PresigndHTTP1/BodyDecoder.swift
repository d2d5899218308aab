/// Delimits one message body per its `BodyFraming` (RFC 9112 §6.3), counting body bytes without reading them.
struct BodyDecoder: Sendable {
    private enum Mode: Sendable, Equatable {
        case none
        case contentLength(remaining: Int)
        case chunked
        case untilClose
    }

    private var mode: Mode
    private var chunked = ChunkedDecoder()

    init(_ framing: BodyFraming) {
        switch framing {
        case .none: mode = .none
        case .contentLength(let length): mode = .contentLength(remaining: length)
        case .chunked: mode = .chunked
        case .untilClose: mode = .untilClose
        }
    }

    /// Trailer fields of a chunked body, complete at `.end`.
    var trailers: HTTPHeaders { chunked.trailers }

    /// Whether the body is delimited by the connection closing.
    var isUntilClose: Bool { mode == .untilClose }

    mutating func next(_ input: UnsafeBufferPointer<UInt8>, available: Int, limits: DecoderLimits)
        throws(HTTPParseError) -> BodyStep
    {
        switch mode {
        case .none:
            return .end(consumed: 0)
        case .contentLength(let remaining):
            guard remaining > 0 else { return .end(consumed: 0) }
            let count = min(remaining, available)
            guard count > 0 else { return .needMore(consumed: 0) }
            mode = .contentLength(remaining: remaining - count)
            return .body(skip: 0, count: count)
        case .chunked:
            return try chunked.next(input, available: available, limits: limits)
        case .untilClose:
            return available > 0 ? .body(skip: 0, count: available) : .needMore(consumed: 0)
        }
    }
}
