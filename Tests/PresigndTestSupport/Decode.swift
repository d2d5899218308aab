import PresigndHTTP1
import Testing

/// Decodes requests from `text` fed one way.
public func decodeRequests(_ bytes: [UInt8], feed: Feed, limits: DecoderLimits = .init()) -> Transcript<RequestHead> {
    var decoder = RequestDecoder(limits: limits)
    return simulate(bytes, feed: feed) { (input, available) throws(HTTPParseError) -> Said<RequestHead> in
        said(try decoder.next(input, available: available), by: decoder)
    }
}

/// What the caller saw of one `RequestDecoder.next` output (the decoder's state read right after it).
public func said(_ output: DecoderOutput, by decoder: RequestDecoder) -> Said<RequestHead> {
    switch output {
    case .needMore(let consumed):
        return .needMore(consumed)
    case .head(let head, let consumed):
        let message = Message(
            head: head, framing: decoder.framing, isKeepAlive: decoder.isKeepAlive,
            expectsContinue: decoder.expectsContinue)
        return .head(message, consumed)
    case .body(let skip, let count):
        return .body(skip: skip, count: count)
    case .end(let consumed):
        return .end(consumed, trailers: decoder.trailers)
    }
}

/// Decodes requests fed every way, expects the same transcript each time, and returns it.
public func decodeRequests(_ text: String, limits: DecoderLimits = .init()) -> Transcript<RequestHead> {
    decodeRequests(Array(text.utf8), limits: limits)
}

public func decodeRequests(_ bytes: [UInt8], limits: DecoderLimits = .init()) -> Transcript<RequestHead> {
    let whole = decodeRequests(bytes, feed: .whole, limits: limits)
    for feed in Feed.allCases.dropFirst() {
        #expect(decodeRequests(bytes, feed: feed, limits: limits) == whole, "fed \(feed)")
    }
    return whole
}

/// Decodes responses to `methods` (one per final response; the last repeats) fed one way.
public func decodeResponses(_ bytes: [UInt8], methods: [String], feed: Feed, rawFields: Bool = false)
    -> Transcript<ResponseHead>
{
    var decoder = ResponseDecoder()
    decoder.forwardsRawFields = rawFields
    var answered = 0
    return simulate(bytes, feed: feed) { (input, available) throws(HTTPParseError) -> Said<ResponseHead> in
        let method = methods[min(answered, methods.count - 1)]
        switch try decoder.next(input, available: available, requestMethod: method) {
        case .needMore(let consumed):
            return .needMore(consumed)
        case .head(let head, let consumed):
            if !head.isInterim { answered += 1 }
            return .head(Message(head: head, framing: decoder.framing, isKeepAlive: decoder.isKeepAlive), consumed)
        case .body(let skip, let count):
            return .body(skip: skip, count: count)
        case .end(let consumed):
            return .end(consumed, trailers: decoder.trailers)
        }
    }
}

public func decodeResponses(_ text: String, methods: [String] = ["GET"], rawFields: Bool = false)
    -> Transcript<ResponseHead>
{
    let bytes = Array(text.utf8)
    let whole = decodeResponses(bytes, methods: methods, feed: .whole, rawFields: rawFields)
    for feed in Feed.allCases.dropFirst() {
        #expect(decodeResponses(bytes, methods: methods, feed: feed, rawFields: rawFields) == whole, "fed \(feed)")
    }
    return whole
}

/// Decodes an aws-chunked payload fed every way; the transcript has one pseudo-message holding the payload.
public func decodeAWSChunked(_ bytes: [UInt8]) -> (transcript: Transcript<Int>, decoder: AWSChunkedDecoder) {
    var results: [(Transcript<Int>, AWSChunkedDecoder)] = []
    for feed in Feed.allCases {
        var decoder = AWSChunkedDecoder()
        let payload = Message(head: 0, framing: .chunked, isKeepAlive: true)
        let transcript = simulate(bytes, feed: feed, startingWith: [payload]) {
            (input, available) throws(HTTPParseError) -> Said<Int> in
            if decoder.isComplete, available == 0 { return .needMore(0) }
            switch try decoder.next(input, available: available) {
            case .needMore(let consumed): return .needMore(consumed)
            case .head: preconditionFailure("aws-chunked has no head")
            case .body(let skip, let count): return .body(skip: skip, count: count)
            case .end(let consumed): return .end(consumed, trailers: decoder.trailers)
            }
        }
        results.append((transcript, decoder))
    }
    for other in results.dropFirst() {
        #expect(other.0 == results[0].0)
        #expect(other.1.decodedByteCount == results[0].1.decodedByteCount)
    }
    return results[0]
}
