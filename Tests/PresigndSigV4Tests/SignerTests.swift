import Testing

@testable import PresigndSigV4

/// Signing-key cache, presign bounds and secrecy (SIGV4-S3-RULES §6, §7).
@Suite struct SignerTests {
    let credentials = Credentials(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"))
    let request = SignableRequest(
        method: "GET", path: "/b/k", headers: [("Host", "example.com"), ("Range", "bytes=0-1")])

    @Test func cachedAndUncachedSignaturesAgreeAcrossDaySwitches() throws {
        let cached = try Signer(credentials: credentials, region: "auto")
        let uncached = try Signer(credentials: credentials, region: "auto", cachesSigningKey: false)
        let dates = [
            "20260301T235959Z", "20260302T000000Z", "20260301T235959Z", "20260303T120000Z", "20260301T000001Z",
        ]
        for text in dates + dates {
            let date = try #require(AmzDate(parsing: text))
            let a = try cached.sign(request, payload: .emptyBody, date: date)
            let b = try uncached.sign(request, payload: .emptyBody, date: date)
            #expect(a.signature == b.signature, "\(text)")
            #expect(a.stringToSign.contains("\n\(text.prefix(8))/auto/s3/aws4_request\n"))
        }
    }

    @Test func differentDateGivesDifferentKey() throws {
        let signer = try Signer(credentials: credentials, region: "auto")
        let first = try signer.signingKey(dateStamp: "20260301")
        #expect(try signer.signingKey(dateStamp: "20260302") != first)
        #expect(try signer.signingKey(dateStamp: "20260301") == first)
        #expect(first.count == 32)
    }

    @Test(arguments: [0, -1, 604_801, Int.max])
    func presignRejectsExpiryOutOfRange(expires: Int) throws {
        let signer = try Signer(credentials: credentials, region: "auto")
        #expect(throws: SigV4Error.invalidExpiry(seconds: expires)) {
            try signer.presign(method: "GET", host: "h", path: "/k", expires: expires, date: AmzDate(epochSeconds: 0))
        }
    }

    @Test(arguments: [1, 3600, 604_800])
    func presignAcceptsExpiryInRange(expires: Int) throws {
        let signer = try Signer(credentials: credentials, region: "auto")
        let url = try signer.presign(
            method: "GET", host: "h", path: "/k", expires: expires, date: AmzDate(epochSeconds: 10))
        #expect(url.url.contains("X-Amz-Expires=\(expires)&"))
        #expect(url.expiresAt == 10 + expires)
    }

    @Test func presignSignsExtraHeadersAndOverridesAndStripsClientPresignParameters() throws {
        let signer = try Signer(
            credentials: .init(accessKeyID: "AK", secretAccessKey: Secret("s"), sessionToken: Secret("a/b+c=")),
            region: "auto")
        let url = try signer.presign(
            method: "PUT", host: "h", path: "/b/k",
            query: [
                .init(name: "response-content-type", value: "text/plain"),
                .init(name: "X-Amz-Signature", value: "evil"),
            ],
            headers: [("Content-Type", "image/png")], expires: 60, date: AmzDate(epochSeconds: 0))
        #expect(url.url.contains("X-Amz-SignedHeaders=content-type%3Bhost"))
        #expect(url.url.contains("X-Amz-Security-Token=a%2Fb%2Bc%3D&X-Amz-SignedHeaders"))
        #expect(url.url.contains("&response-content-type=text%2Fplain&X-Amz-Signature="))
        #expect(!url.url.contains("evil"))
        #expect(url.signedHeaders.map(\.name) == ["Content-Type"])
    }

    @Test func secretsNeverDescribeThemselves() {
        #expect("\(credentials.secretAccessKey)" == "<redacted>")
        #expect(String(reflecting: credentials.secretAccessKey) == "<redacted>")
        #expect(!"\(credentials)".contains("wJalr"))
    }

    /// The signer's secret type had no mirror of its own, so `dump` printed the stored value.
    @Test func dumpDoesNotRevealSecrets() {
        var dumped = ""
        dump(credentials, to: &dumped)
        #expect(!dumped.contains("wJalr") && dumped.contains("<redacted>"), "\(dumped)")
    }

    @Test func sha256HelpersAgree() throws {
        #expect(try sha256Hex([UInt8]()) == PayloadHash.emptySHA256)
        let hasher = try SHA256()
        try Array("abc".utf8).withUnsafeBytes { try hasher.update($0) }
        #expect(try hasher.finalizeHex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(try hasher.finalizeHex() == PayloadHash.emptySHA256)  // reusable after finalize
        #expect(try sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
