import PresigndHTTP1

/// The HTTP/1 decoders' fuzz drivers: each drives a decoder over arbitrary bytes three ways (all at once, in short
/// segments, and arriving a few bytes at a time, sizes derived from the data) and checks with `precondition` that
/// every output keeps the caller contract, that decoding makes progress, and that all three ways agree.
/// Limits are small so the limit paths are reached.
///
/// Compiled into the libFuzzer targets by `scripts/fuzz.sh` (each harness in `Targets/` calls one entry point) and,
/// as the test-only module `PresigndFuzzDrivers`, into the unit tests (`HTTP1FuzzTests`): never into a shipped
/// module.
public enum HTTP1Fuzz {
    static let limits = DecoderLimits(
        maxRequestLineBytes: 64, maxHeaderBytes: 256, maxHeaderCount: 8, maxChunkLineBytes: 32, maxTrailerBytes: 64)

    /// Requests, pipelined, with any body framing.
    public static func fuzzRequest(_ data: UnsafeRawBufferPointer) {
        let bytes = data.assumingMemoryBound(to: UInt8.self)
        agree(bytes, stopsAtEnd: false) {
            var decoder = RequestDecoder(limits: limits)
            return { (input, available) throws(HTTPParseError) -> FuzzDriver<RequestHead>.Step in
                switch try decoder.next(input, available: available) {
                case .needMore(let consumed): .needMore(consumed: consumed)
                case .head(let head, let consumed): .head(head, consumed: consumed)
                case .body(let skip, let count): .body(skip: skip, count: count)
                case .end(let consumed): .end(consumed: consumed)
                }
            }
        }
    }

    /// Responses; the first byte's low bit makes them answers to HEAD, its next bit decodes with
    /// `forwardsRawFields` (the proxy's mode).
    public static func fuzzResponse(_ data: UnsafeRawBufferPointer) {
        let bytes = data.assumingMemoryBound(to: UInt8.self)
        let method = (bytes.first ?? 0) & 1 == 1 ? "HEAD" : "GET"
        let raw = (bytes.first ?? 0) & 2 == 2
        agree(bytes, stopsAtEnd: false) {
            var decoder = ResponseDecoder(limits: limits)
            decoder.forwardsRawFields = raw
            return { (input, available) throws(HTTPParseError) -> FuzzDriver<ResponseHead>.Step in
                switch try decoder.next(input, available: available, requestMethod: method) {
                case .needMore(let consumed): .needMore(consumed: consumed)
                case .head(let head, let consumed): .head(head, consumed: consumed)
                case .body(let skip, let count): .body(skip: skip, count: count)
                case .end(let consumed): .end(consumed: consumed)
                }
            }
        }
    }

    /// A chunked request body: the data follows a fixed `Transfer-Encoding: chunked` head.
    public static func fuzzChunked(_ data: UnsafeRawBufferPointer) {
        let message = Array("POST /f HTTP/1.1\r\nHost: f\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + Array(data)
        message.withUnsafeBytes { fuzzRequest($0) }
    }

    /// An aws-chunked payload.
    public static func fuzzAWSChunked(_ data: UnsafeRawBufferPointer) {
        let bytes = data.assumingMemoryBound(to: UInt8.self)
        agree(bytes, stopsAtEnd: true) {
            var decoder = AWSChunkedDecoder(limits: limits)
            return { (input, available) throws(HTTPParseError) -> FuzzDriver<Never>.Step in
                switch try decoder.next(input, available: available) {
                case .needMore(let consumed): .needMore(consumed: consumed)
                case .head: preconditionFailure("AWSChunkedDecoder returned a head")
                case .body(let skip, let count): .body(skip: skip, count: count)
                case .end(let consumed): .end(consumed: consumed)
                }
            }
        }
    }

    /// Runs a fresh decoder (from `make`) three ways and requires identical transcripts.
    private static func agree<Head: Equatable>(
        _ data: UnsafeBufferPointer<UInt8>,
        stopsAtEnd: Bool,
        _ make: () -> (UnsafeRawBufferPointer, Int) throws(HTTPParseError) -> FuzzDriver<Head>.Step
    ) {
        let seed = data.reduce(0) { ($0 &* 31) &+ Int($1) } & 0xFFFF
        let whole = FuzzDriver<Head>(stopsAtEnd: stopsAtEnd).run(data, make())
        let segmented = FuzzDriver<Head>(segment: seed % 13 + 1, stopsAtEnd: stopsAtEnd).run(data, make())
        let trickled = FuzzDriver<Head>(feed: seed / 13 % 5 + 1, stopsAtEnd: stopsAtEnd).run(data, make())
        precondition(whole == segmented, "segmented decoding differs")
        precondition(whole == trickled, "trickled decoding differs")
    }
}
