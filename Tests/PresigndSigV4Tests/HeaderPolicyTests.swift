import Testing

@testable import PresigndSigV4

/// Which headers are signed, forwarded unsigned or stripped (SIGV4-S3-RULES §4.2–4.4).
@Suite struct HeaderPolicyTests {
    @Test(arguments: [
        "host", "x-amz-meta-a", "x-amz-copy-source", "x-amz-checksum-crc32", "x-amz-storage-class",
        "x-amz-decoded-content-length", "x-amz-trailer", "content-type", "content-md5", "content-length", "range",
        "content-encoding", "content-disposition", "content-language", "cache-control", "expires", "if-match",
        "if-none-match", "if-modified-since", "if-unmodified-since", "date", "cf-create-bucket-if-missing",
        "cf-copy-destination-if-match", "cf-copy-destination-if-none-match", "cf-copy-destination-if-modified-since",
        "cf-copy-destination-if-unmodified-since",
    ])
    func signs(name: String) { #expect(HeaderPolicy.rule(forLowercasedName: name) == .sign) }

    @Test(arguments: [
        "user-agent", "accept-encoding", "x-amzn-trace-id", "traceparent", "tracestate", "baggage", "accept",
        "my-header",
    ])
    func forwardsUnsigned(name: String) { #expect(HeaderPolicy.rule(forLowercasedName: name) == .forwardUnsigned) }

    @Test(arguments: [
        "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authorization", "proxy-connection", "expect", "authorization", "x-amz-date", "x-amz-content-sha256",
        "x-amz-security-token", "via", "forwarded", "x-forwarded-for", "x-forwarded-proto", "cf-ray",
        "cf-connecting-ip",
        "cf-ipcountry", "cf-prefix", "cf-create-bucket-if-missing-x",
    ])
    func strips(name: String) { #expect(HeaderPolicy.rule(forLowercasedName: name) == .strip) }

    @Test func listsConnectionTokens() {
        #expect(HeaderPolicy.connectionListedNames(" Keep-Alive ,, X-Foo\t,") == ["keep-alive", "x-foo"])
    }
}
