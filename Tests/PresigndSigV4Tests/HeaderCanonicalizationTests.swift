import Testing

@testable import PresigndSigV4

/// Canonical header values and joining (SIGV4-S3-RULES §4.1).
@Suite struct HeaderCanonicalizationTests {
    func trimmed(_ value: String) -> String {
        var output: [UInt8] = []
        CanonicalHeaders.appendTrimmed(value, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    @Test(arguments: [
        ("  a  ", "a"), ("\"a   b   c\"", "\"a b c\""), ("a\t\tb", "a b"), ("a \t b", "a b"), ("", ""), ("   ", ""),
        ("value1\r\n  value2", "value1 value2"), ("VaLuE", "VaLuE"), ("a, b", "a, b"),
    ])
    func trimsAndCollapsesWhitespace(raw: String, expected: String) {
        #expect(trimmed(raw) == expected)
    }

    @Test func repeatedHeadersJoinWithCommaInArrivalOrder() throws {
        let signer = try Signer(credentials: .init(accessKeyID: "AK", secretAccessKey: Secret("s")), region: "auto")
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        let request = SignableRequest(
            method: "GET", path: "/", headers: [("Host", "h"), ("X-Amz-Meta-A", "b"), ("x-amz-meta-a", " a  z "),
                ("X-Amz-Meta-A", "c"), ("Content-Type", "")])
        let signed = try signer.sign(request, payload: .unsigned, date: date)
        #expect(signed.canonicalRequest.contains("\nx-amz-meta-a:b,a z,c\n"))
        #expect(signed.canonicalRequest.contains("\ncontent-type:\n"))
        #expect(signed.signedHeaders == "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a")
    }

    @Test func s3PolicyStripsUnsignsAndReplaces() throws {
        let signer = try Signer(
            credentials: .init(accessKeyID: "AK", secretAccessKey: Secret("s"), sessionToken: Secret("tok")), region: "auto")
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        let request = SignableRequest(
            method: "PUT", path: "/b/k", query: [.init(name: "X-Amz-Signature", value: "x"), .init(name: "partNumber", value: "1")],
            headers: [("Host", "h"), ("Connection", "keep-alive, X-Custom"), ("X-Custom", "1"), ("User-Agent", "ua"),
                ("Authorization", "old"), ("X-Amz-Date", "old"), ("Expect", "100-continue"), ("CF-Ray", "r"),
                ("X-Forwarded-For", "1.2.3.4"), ("Range", "bytes=0-1"), ("Transfer-Encoding", "chunked")])
        let signed = try signer.sign(request, payload: .unsigned, date: date)
        let names = signed.headers.map(\.name)
        #expect(names == ["Host", "User-Agent", "Range", "X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token", "Authorization"])
        #expect(signed.signedHeaders == "host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token")
        #expect(signed.target == "/b/k?partNumber=1")
        #expect(signed.authorization.contains("Credential=AK/20260301/auto/s3/aws4_request, SignedHeaders="))
    }
}
