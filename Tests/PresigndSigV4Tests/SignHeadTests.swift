import Testing

@testable import PresigndSigV4

/// `signHead` writes exactly the head the proxy would encode from `sign(...)`'s `SignedRequest` (§8 step 6).
@Suite struct SignHeadTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var request: SignableRequest
        var payload: PayloadHash = .emptyBody
        var sessionToken: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "typical GET", request: SignableRequest(
                method: "GET", path: "/photos/cat%20picture.jpg",
                query: [.init(name: "versionId", value: "3HL4kqtJlcpXroDTDmJ")],
                headers: [("Host", "h.example"), ("User-Agent", "curl/8.5.0"), ("Range", "bytes=0-1")])),
        Case(
            name: "repeated headers", request: SignableRequest(
                method: "PUT", path: "/b/k",
                headers: [("Host", "h"), ("X-Amz-Meta-A", "b"), ("x-amz-meta-a", " a  z "), ("Accept", "1"),
                    ("X-AMZ-META-A", "c"), ("accept", "2")]),
            payload: .unsigned),
        Case(
            name: "Connection-listed headers", request: SignableRequest(
                method: "GET", path: "/b/k",
                headers: [("Host", "h"), ("Connection", "keep-alive, X-Custom"), ("X-Custom", "1"),
                    ("connection", "\tRange ,"), ("Range", "bytes=0-1"), ("Keep-Alive", "timeout=5"), ("x-amz-meta-k", "v")])),
        Case(
            name: "presign query parameters stripped", request: SignableRequest(
                method: "GET", path: "/b/k",
                query: [.init(name: "X-Amz-Signature", value: "x"), .init(name: "partNumber", value: "1"),
                    .init(name: "x-amz-credential", value: "AK/2026"), .init(name: "a b", value: "c/d+e")],
                headers: [("Host", "h"), ("Authorization", "old"), ("X-Amz-Date", "old")])),
        Case(
            name: "only presign query parameters", request: SignableRequest(
                method: "GET", path: "/b/k", query: [.init(name: "X-Amz-Expires", value: "60")], headers: [("Host", "h")])),
        Case(
            name: "session token", request: SignableRequest(
                method: "DELETE", path: "/b/k",
                headers: [("Host", "h"), ("X-Amz-Security-Token", "client's"), ("Content-Length", "0")]),
            sessionToken: "a/b+c="),
        Case(
            name: "mixed-case names", request: SignableRequest(
                method: "POST", path: "/b/k", query: [.init(name: "uploads", value: "")],
                headers: [("hOsT", "h:9000"), ("CONTENT-TYPE", "text/plain"), ("If-None-Match", "\"e\""),
                    ("X-Forwarded-For", "1.2.3.4"), ("cf-ray", "r"), ("Expect", "100-continue"), ("TE", "trailers")]),
            payload: .sha256(hex: String(repeating: "ab", count: 32))),
        Case(
            name: "empty query and no headers", request: SignableRequest(method: "GET", path: "/", headers: [])),
    ]

    /// The head as `signedHead` in the proxy builds it from a `SignedRequest`.
    static func encoded(_ signed: SignedRequest) -> [UInt8] {
        var encoded: [UInt8] = []
        encoded.append(contentsOf: signed.method.utf8)
        encoded.append(32)
        encoded.append(contentsOf: signed.target.utf8)
        encoded.append(contentsOf: " HTTP/1.1\r\n".utf8)
        for (name, value) in signed.headers {
            encoded.append(contentsOf: name.utf8)
            encoded.append(contentsOf: ": ".utf8)
            encoded.append(contentsOf: value.utf8)
            encoded.append(contentsOf: "\r\n".utf8)
        }
        encoded.append(contentsOf: "\r\n".utf8)
        return encoded
    }

    static func signer(sessionToken: String?) throws -> Signer {
        try Signer(
            credentials: .init(
                accessKeyID: "AKIDEXAMPLE", secretAccessKey: Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
                sessionToken: sessionToken.map(Secret.init)),
            region: "auto")
    }

    @Test(arguments: cases)
    func headEqualsTheEncodedSignedRequest(testCase: Case) throws {
        let date = try #require(AmzDate(parsing: "20260301T235959Z"))
        let signer = try Self.signer(sessionToken: testCase.sessionToken)
        let signed = try signer.sign(testCase.request, payload: testCase.payload, date: date)
        var head: [UInt8] = []
        try signer.signHead(testCase.request, payload: testCase.payload, date: date, into: &head)
        #expect(String(decoding: head, as: UTF8.self) == String(decoding: Self.encoded(signed), as: UTF8.self))
        // A fresh signer (cold key cache, empty scratch) writes the same bytes.
        var fresh: [UInt8] = []
        try Self.signer(sessionToken: testCase.sessionToken).signHead(
            testCase.request, payload: testCase.payload, date: date, into: &fresh)
        #expect(fresh == head)
    }

    @Test func appendsToANonEmptyBuffer() throws {
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        let signer = try Self.signer(sessionToken: nil)
        let request = Self.cases[0].request
        let prefix = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        var output = prefix
        try signer.signHead(request, payload: .emptyBody, date: date, into: &output)
        let expected = Self.encoded(try signer.sign(request, payload: .emptyBody, date: date))
        #expect(Array(output.prefix(prefix.count)) == prefix)
        #expect(Array(output.dropFirst(prefix.count)) == expected)
    }

    @Test func interleavedWithOtherSigningStaysIdentical() throws {
        // The scratch buffers are shared by sign, signHead and presign on one signer: none may leak into another.
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        let signer = try Self.signer(sessionToken: "tok")
        for testCase in Self.cases {
            var first: [UInt8] = []
            try signer.signHead(testCase.request, payload: testCase.payload, date: date, into: &first)
            _ = try signer.presign(method: "GET", host: "h", path: "/x", headers: [("Content-Type", "a")], expires: 60, date: date)
            _ = try signer.sign(Self.cases[1].request, payload: .unsigned, date: date, selection: .all)
            var second: [UInt8] = []
            try signer.signHead(testCase.request, payload: testCase.payload, date: date, into: &second)
            #expect(first == second, "\(testCase.name)")
        }
    }

    @Test func stripsConnectionListedAndPresignInputs() throws {
        let date = try #require(AmzDate(parsing: "20260301T000000Z"))
        var head: [UInt8] = []
        try Self.signer(sessionToken: nil).signHead(Self.cases[2].request, payload: .emptyBody, date: date, into: &head)
        let text = String(decoding: head, as: UTF8.self)
        #expect(!text.contains("X-Custom") && !text.contains("Range") && !text.contains("Keep-Alive"))
        #expect(text.contains("\r\nx-amz-meta-k: v\r\n"))
        head.removeAll()
        try Self.signer(sessionToken: nil).signHead(Self.cases[3].request, payload: .emptyBody, date: date, into: &head)
        #expect(String(decoding: head, as: UTF8.self).hasPrefix("GET /b/k?a%20b=c%2Fd%2Be&partNumber=1 HTTP/1.1\r\n"))
    }
}
