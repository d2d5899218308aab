import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// The upstream's largest single PUT (issue 20): refused from the head, before a byte of the body is read.
@Suite struct PutSizeTests {
    static let r2Limit = 5 * 1024 * 1024 * 1024 - 5 * 1024 * 1024

    static func settings() -> ProxySettings {
        let base = RequestRewriterTests.settings()
        var target = base.upstreams[0]
        target.maxPutSize = r2Limit
        return ProxySettings(upstreams: [target], routes: base.router.routes, limits: ClientLimits())
    }

    @Test func anR2UploadDeclaring5GiBIsRefusedWithEntityTooLarge() {
        let head = RequestRewriterTests.head("PUT", "/photos/big.bin", [("Content-Length", "5368709120")])
        #expect(
            RequestRewriterTests.error(head, framing: .contentLength(5 << 30), settings: Self.settings())
                == .entityTooLarge)
    }

    @Test func anUploadOfExactlyTheLimitPasses() {
        let head = RequestRewriterTests.head("PUT", "/photos/big.bin", [("Content-Length", String(Self.r2Limit))])
        #expect(
            RequestRewriterTests.plan(head, framing: .contentLength(Self.r2Limit), settings: Self.settings()) != nil)
    }

    @Test func anAWSChunkedUploadIsJudgedByItsDecodedLength() {
        let over = RequestRewriterTests.head(
            "PUT", "/photos/big.bin",
            [
                ("Content-Encoding", "aws-chunked"), ("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
                ("x-amz-decoded-content-length", String(Self.r2Limit + 1)),
            ])
        #expect(RequestRewriterTests.error(over, framing: .chunked, settings: Self.settings()) == .entityTooLarge)
        // The chunk framing makes Content-Length larger than the object: the decoded length is what counts.
        let within = RequestRewriterTests.head(
            "PUT", "/photos/big.bin",
            [
                ("Content-Encoding", "aws-chunked"), ("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
                ("x-amz-decoded-content-length", String(Self.r2Limit)),
            ])
        #expect(
            RequestRewriterTests.plan(within, framing: .contentLength(Self.r2Limit + 4096), settings: Self.settings())
                != nil)
    }
}
