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

    /// The eight-bytes-at-a-time test that lets most values skip trimming answers like a byte-by-byte one, for every
    /// byte value in every position (also with a high-bit byte next to it, which must not borrow into it).
    @Test func wordAtATimeSpaceTestAgreesWithTheBytewiseOne() {
        var mismatches: [String] = []
        for filler in [UInt8(ascii: "a"), 0xC3, 0x7F] {
            for position in 0..<19 {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: filler, count: 19)
                    bytes[position] = byte
                    let fast = bytes.withUnsafeBufferPointer { CanonicalHeaders.hasByteAtMostSpace($0) }
                    if fast != (byte <= 0x20) { mismatches.append("filler \(filler) byte \(byte) at \(position)") }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// Values long enough for the word test, with whitespace in every position, trim as the rule says.
    @Test func longValuesTrimAndCollapseWhereverTheWhitespaceIs() {
        let base = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
        for run in [" ", "\t", "  ", " \t\r\n "] {
            for position in 0...base.count {
                var value = base
                value.insert(contentsOf: Array(run.utf8), at: position)
                let text = String(decoding: value, as: UTF8.self)
                let expected = text.split(whereSeparator: { " \t\r\n".contains($0) }).joined(separator: " ")
                #expect(trimmed(text) == expected, "\(run.debugDescription) at \(position)")
            }
        }
        #expect(trimmed(String(decoding: base, as: UTF8.self)) == String(decoding: base, as: UTF8.self))
    }

    @Test func repeatedHeadersJoinWithCommaInArrivalOrder() throws {
        let signer = try Signer(credentials: .init(accessKeyID: "AK", secretAccessKey: Secret("s")), region: "auto")
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        let request = SignableRequest(
            method: "GET", path: "/",
            headers: [
                ("Host", "h"), ("X-Amz-Meta-A", "b"), ("x-amz-meta-a", " a  z "),
                ("X-Amz-Meta-A", "c"), ("Content-Type", ""),
            ])
        let signed = try signer.sign(request, payload: .unsigned, date: date)
        #expect(signed.canonicalRequest.contains("\nx-amz-meta-a:b,a z,c\n"))
        #expect(signed.canonicalRequest.contains("\ncontent-type:\n"))
        #expect(signed.signedHeaders == "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a")
    }

    @Test func s3PolicyStripsUnsignsAndReplaces() throws {
        let signer = try Signer(
            credentials: .init(accessKeyID: "AK", secretAccessKey: Secret("s"), sessionToken: Secret("tok")),
            region: "auto")
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        let request = SignableRequest(
            method: "PUT", path: "/b/k",
            query: [.init(name: "X-Amz-Signature", value: "x"), .init(name: "partNumber", value: "1")],
            headers: [
                ("Host", "h"), ("Connection", "keep-alive, X-Custom"), ("X-Custom", "1"), ("User-Agent", "ua"),
                ("Authorization", "old"), ("X-Amz-Date", "old"), ("Expect", "100-continue"), ("CF-Ray", "r"),
                ("X-Forwarded-For", "1.2.3.4"), ("Range", "bytes=0-1"), ("Transfer-Encoding", "chunked"),
            ])
        let signed = try signer.sign(request, payload: .unsigned, date: date)
        let names = signed.headers.map(\.name)
        #expect(
            names == [
                "Host", "User-Agent", "Range", "X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token",
                "Authorization",
            ])
        #expect(signed.signedHeaders == "host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token")
        #expect(signed.target == "/b/k?partNumber=1")
        #expect(signed.authorization.contains("Credential=AK/20260301/auto/s3/aws4_request, SignedHeaders="))
    }
}
