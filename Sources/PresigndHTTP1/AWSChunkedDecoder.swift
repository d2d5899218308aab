/// Unwraps an `aws-chunked` payload (`Content-Encoding: aws-chunked`, as AWS SDKs send with
/// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD` or `STREAMING-UNSIGNED-PAYLOAD-TRAILER`), fed the request's body bytes
/// (already de-chunked or Content-Length delimited by `RequestDecoder`).
///
/// The format is the chunked coding's (RFC 9112 §7.1): `hex(size)[;chunk-signature=<sig>] CRLF data CRLF`, a
/// final `0[;chunk-signature=<sig>] CRLF`, trailer lines such as `x-amz-checksum-crc32:<base64> CRLF`, and an
/// empty line. Chunk signatures are not checked here. Outputs follow `DecoderOutput` (never `.head`); bytes
/// after the final empty line are `invalidChunkFraming`.
public struct AWSChunkedDecoder: Sendable {
    public let limits: DecoderLimits
    private var chunked = ChunkedDecoder()
    private var failure: HTTPParseError?

    public init(limits: DecoderLimits = .init()) {
        self.limits = limits
    }

    /// The trailer fields (`x-amz-checksum-*`, `x-amz-trailer-signature`), complete once `isComplete`.
    public var trailers: HTTPHeaders { chunked.trailers }
    /// Payload bytes reported so far; compare with `x-amz-decoded-content-length`.
    public var decodedByteCount: Int { chunked.decodedByteCount }
    /// The final chunk and trailer section have been read.
    public var isComplete: Bool { chunked.isDone }

    /// Decodes from `input`, the first contiguous segment of the body bytes, of which `available` are buffered.
    public mutating func next(_ input: UnsafeRawBufferPointer, available: Int) throws(HTTPParseError)
        -> DecoderOutput
    {
        precondition(available >= input.count, "available counts the whole buffer, input its first segment")
        if let failure { throw failure }
        if chunked.isDone {
            guard available == 0 else {
                failure = .invalidChunkFraming
                throw .invalidChunkFraming
            }
            return .end(consumed: 0)
        }
        do throws(HTTPParseError) {
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            return try chunked.next(bytes, available: available, limits: limits).output
        } catch {
            failure = error
            throw error
        }
    }
}
