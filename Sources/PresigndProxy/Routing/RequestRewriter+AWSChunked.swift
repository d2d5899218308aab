import PresigndHTTP1
import PresigndSigV4

/// How an `aws-chunked` body with a known decoded length is streamed (issue 21): decoded as it arrives, its
/// declared trailer checksum computed as the bytes pass and compared before the last byte goes upstream.
struct AWSChunkedPlan: Equatable {
    /// `x-amz-decoded-content-length` (more than zero: an empty body is spooled, so the upstream's body can be
    /// held incomplete until the trailer is checked).
    var decodedLength: Int
    /// The checksum `x-amz-trailer` names, verified on the way.
    var checksum: ChecksumAlgorithm?
    /// `forward` upstreams (S3): the body is framed again as unsigned aws-chunked with the checksum trailer
    /// (`STREAMING-UNSIGNED-PAYLOAD-TRAILER`), so the upstream stores the checksum. Otherwise a plain body.
    var reframes: Bool

    /// The chunk size of a re-framed body.
    static let chunkSize = 64 * 1024

    /// The trailer line of a re-framed body: `name:base64\r\n`.
    var trailerLineLength: Int {
        guard let checksum else { return 0 }
        return checksum.fieldName.utf8.count + 1 + checksum.base64Length + 2
    }

    /// The upstream's `Content-Length`.
    var upstreamLength: Int {
        guard reframes else { return decodedLength }
        return AWSChunked.unsignedTrailerEncodedLength(
            decodedLength: decodedLength, chunkSize: Self.chunkSize, trailerLength: trailerLineLength)
    }
}

extension RequestRewriter {
    /// Decides streaming or spooling, and rewrites `aws-chunked` headers (SIGV4-S3-RULES §5: R2 rejects streaming
    /// payloads; S3 takes unsigned ones). Chunk signatures are made with the client's key, not the upstream's: they
    /// are read past and dropped, and the body is sent unsigned (issue 21). `readsWhole`: the body must be checked
    /// before it is sent (DeleteObjects), so it is spooled.
    static func bodyPlan(
        head: RequestHead, framing: BodyFraming, payload: PayloadHash, forwardsAWSChunked: Bool, readsWhole: Bool,
        headers: inout [(name: String, value: String)]
    ) throws(ProxyError) -> BodyPlan {
        let encodings = head.headers.values("content-encoding").flatMap { $0.split(separator: ",") }
            .map { ASCII.lowercased(String($0.trimmingSpaces())) }
        let signedChunks = payload == .streamingSigned || payload == .streamingSignedTrailer
        let isAWSChunked = encodings.contains("aws-chunked") || signedChunks || payload == .streamingUnsignedTrailer
        let plain: BodyPlan = framing == .chunked ? .spool(unwrapsAWSChunked: false, decodedLength: nil) : .stream
        guard isAWSChunked else { return plain }
        if forwardsAWSChunked && !signedChunks { return plain }
        var decodedLength: Int? = nil
        if let text = head.headers["x-amz-decoded-content-length"] {
            guard let value = Int(text), value >= 0 else {
                throw .badRequest("x-amz-decoded-content-length is not a length")
            }
            decodedLength = value
        }
        let checksum = try declaredTrailerChecksum(head)
        let streamedLength = readsWhole ? nil : decodedLength.flatMap { $0 > 0 ? $0 : nil }
        if forwardsAWSChunked, let streamedLength, checksum != nil {
            // S3 takes unsigned aws-chunked: the chunks are framed again, the trailer kept (S3 stores the checksum).
            headers.removeAll { ASCII.equalsLowercase($0.name, "x-amz-trailer") }
            headers.append(("x-amz-trailer", checksum!.fieldName))
            if !encodings.contains("aws-chunked") { headers.append(("Content-Encoding", "aws-chunked")) }
            return .decodeAWSChunked(AWSChunkedPlan(decodedLength: streamedLength, checksum: checksum, reframes: true))
        }
        // Unwrapped: the upstream sees a plain body.
        let headChecksum = head.headers.contains { ChecksumAlgorithm(fieldName: $0.name) != nil }
        headers.removeAll { header in
            ASCII.equalsLowercase(header.name, "x-amz-decoded-content-length")
                || ASCII.equalsLowercase(header.name, "x-amz-trailer")
                || ASCII.equalsLowercase(header.name, "content-encoding")
                // Streamed, the trailer's checksum comes after the head: S3 refuses an algorithm without a value.
                || (streamedLength != nil && !headChecksum
                    && ASCII.equalsLowercase(header.name, "x-amz-sdk-checksum-algorithm"))
        }
        let remaining = encodings.filter { $0 != "aws-chunked" && !$0.isEmpty }
        if !remaining.isEmpty { headers.append(("Content-Encoding", remaining.joined(separator: ","))) }
        if let streamedLength {
            return .decodeAWSChunked(AWSChunkedPlan(decodedLength: streamedLength, checksum: checksum, reframes: false))
        }
        // Length unknown: spooled, and the trailer's checksum becomes a header once the body is complete.
        return .spool(unwrapsAWSChunked: true, decodedLength: decodedLength)
    }

    /// The checksum named by `x-amz-trailer`; one the proxy cannot compute is refused (deny what is unclear).
    static func declaredTrailerChecksum(_ head: RequestHead) throws(ProxyError) -> ChecksumAlgorithm? {
        let names = head.headers.values("x-amz-trailer").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        guard let name = names.first else { return nil }
        guard names.count == 1, let algorithm = ChecksumAlgorithm(fieldName: name) else {
            throw .badRequest("x-amz-trailer names something other than one x-amz-checksum-* field")
        }
        return algorithm
    }
}
