import PresigndHTTP1
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// `RequestRewriter.bodyPlan` for aws-chunked uploads (issue 21): streamed when the decoded length is known,
/// chunk signatures accepted, re-framed for `forward` upstreams, spooled only when the length is unknown.
@Suite struct RequestRewriterAWSChunkedTests {
    typealias T = RequestRewriterTests

    static func head(
        payload: String = "STREAMING-UNSIGNED-PAYLOAD-TRAILER", decoded: String? = "11",
        trailer: String? = "x-amz-checksum-crc32", extra: [(String, String)] = []
    ) -> RequestHead {
        var headers: [(String, String)] = [("Content-Encoding", "aws-chunked"), ("x-amz-content-sha256", payload)]
        if let decoded { headers.append(("x-amz-decoded-content-length", decoded)) }
        if let trailer { headers.append(("x-amz-trailer", trailer)) }
        return T.head("PUT", "/photos/a", headers + extra)
    }

    static func names(_ plan: ForwardPlan) -> [String] { plan.request.headers.map { $0.name.lowercased() } }

    @Test(arguments: [
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
        "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
    ])
    func streamsEveryAWSChunkedFormAsAPlainBodyWhenUnwrapping(payload: String) throws {
        let plan = try #require(T.plan(Self.head(payload: payload), framing: .contentLength(300)))
        #expect(plan.body == .decodeAWSChunked(AWSChunkedPlan(decodedLength: 11, checksum: .crc32, reframes: false)))
        #expect(plan.payload == .unsigned)
        #expect(plan.request.headers.contains { $0.name == "Content-Length" && $0.value == "11" })
        for gone in ["x-amz-trailer", "x-amz-decoded-content-length", "content-encoding"] {
            #expect(!Self.names(plan).contains(gone))
        }
    }

    @Test func streamsAWSChunkedInsideHTTPChunkedFraming() throws {
        let plan = try #require(T.plan(Self.head(), framing: .chunked))
        #expect(plan.body == .decodeAWSChunked(AWSChunkedPlan(decodedLength: 11, checksum: .crc32, reframes: false)))
    }

    @Test func spoolsOnlyWhenTheDecodedLengthIsUnknownOrZero() throws {
        let unknown = try #require(T.plan(Self.head(decoded: nil), framing: .chunked))
        #expect(unknown.body == .spool(unwrapsAWSChunked: true, decodedLength: nil))
        let empty = try #require(T.plan(Self.head(decoded: "0"), framing: .contentLength(40)))
        #expect(empty.body == .spool(unwrapsAWSChunked: true, decodedLength: 0))
    }

    @Test func dropsTheSDKAlgorithmUnlessAChecksumHeaderCameInTheHead() throws {
        let alone = try #require(
            T.plan(Self.head(extra: [("x-amz-sdk-checksum-algorithm", "CRC32")]), framing: .contentLength(60)))
        #expect(!Self.names(alone).contains("x-amz-sdk-checksum-algorithm"))
        let withHeader = try #require(
            T.plan(
                Self.head(
                    trailer: nil,
                    extra: [("x-amz-sdk-checksum-algorithm", "CRC32"), ("x-amz-checksum-crc32", "DUoRhQ==")]),
                framing: .contentLength(60)))
        #expect(Self.names(withHeader).contains("x-amz-sdk-checksum-algorithm"))
        #expect(withHeader.request.headers.contains { $0.name == "x-amz-checksum-crc32" && $0.value == "DUoRhQ==" })
    }

    @Test func reframesSignedChunksForUpstreamsThatTakeAWSChunked() throws {
        let settings = T.settings(forwardsAWSChunked: true)
        let plan = try #require(
            T.plan(
                Self.head(payload: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", decoded: "100000"),
                framing: .contentLength(100_500), settings: settings))
        let expected = AWSChunkedPlan(decodedLength: 100_000, checksum: .crc32, reframes: true)
        #expect(plan.body == .decodeAWSChunked(expected))
        #expect(plan.payload == .streamingUnsignedTrailer)
        // `10000\r\n` 64 KiB `\r\n`, `86a0\r\n` 34464 bytes `\r\n`, `0\r\n`, `x-amz-checksum-crc32:XXXXXXXX\r\n`, `\r\n`.
        let length = 7 + 65536 + 2 + 6 + 34464 + 2 + 3 + 31 + 2
        #expect(expected.upstreamLength == length)
        #expect(plan.request.headers.contains { $0.name == "Content-Length" && $0.value == String(length) })
        #expect(plan.request.headers.contains { $0.name == "x-amz-trailer" && $0.value == "x-amz-checksum-crc32" })
        #expect(Self.names(plan).contains("x-amz-decoded-content-length"))
        // Signed chunks without a trailer: a plain body (nothing for S3 to store as a checksum).
        let untrailed = try #require(
            T.plan(
                Self.head(payload: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", trailer: nil), framing: .contentLength(200),
                settings: settings))
        #expect(untrailed.body == .decodeAWSChunked(AWSChunkedPlan(decodedLength: 11, checksum: nil, reframes: false)))
        #expect(untrailed.payload == .unsigned)
    }

    @Test func forwardsUnsignedAWSChunkedAsItCame() throws {
        let plan = try #require(
            T.plan(Self.head(), framing: .contentLength(60), settings: T.settings(forwardsAWSChunked: true)))
        #expect(plan.body == .stream)
        #expect(plan.payload == .streamingUnsignedTrailer)
    }

    @Test(arguments: ["x-amz-meta-foo", "x-amz-checksum-md5", "x-amz-checksum-crc32, x-amz-checksum-sha1"])
    func refusesTrailersItCannotCheck(trailer: String) {
        #expect(
            T.error(Self.head(trailer: trailer), framing: .contentLength(60))
                == .badRequest(
                    "x-amz-trailer names something other than one x-amz-checksum-* field"))
    }

    @Test func checksDecodedLengthAgainstTheBucketsUploadLimit() {
        #expect(T.error(Self.head(decoded: "not-a-number"), framing: .contentLength(60)) != nil)
    }
}
