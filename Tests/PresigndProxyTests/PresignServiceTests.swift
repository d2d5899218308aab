import PresigndSigV4
import PresigndTestSupport
import Testing

@testable import PresigndProxy

@Suite struct PresignServiceTests {
    static let date = AmzDate(epochSeconds: 1_772_323_200)  // 2026-03-01T00:00:00Z

    static func settings() -> ProxySettings {
        let upstream = UpstreamTarget(
            name: "r2", usesTLS: true, host: "acct.r2.cloudflarestorage.com", port: 443,
            hostHeader: "acct.r2.cloudflarestorage.com", region: "auto",
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("secret")), tls: nil)
        func route(_ name: String, readOnly: Bool = false) -> BucketRoute {
            BucketRoute(name: name, upstreamIndex: 0, mount: Array("/\(name)".utf8), isReadOnly: readOnly)
        }
        var limited = route("limited")
        limited.allowedPrefixes = ["public/"]
        limited.allowedMethods = ["GET", "PUT"]
        limited.maxPresignExpiry = 600
        limited.maxUploadSize = 1024
        return ProxySettings(
            upstreams: [upstream], routes: [route("photos"), route("archive", readOnly: true), limited],
            limits: ClientLimits())
    }

    let service = PresignService(settings: Self.settings())

    /// The refusal for a JSON body: decoding, then policy, exactly as the API runs them.
    func failure(_ json: String) -> PresignFailure? {
        switch PresignRequestJSON.decode(Array(json.utf8)) {
        case .failure(let failure): return failure
        case .success(let request):
            if case .failure(let failure) = service.presign(request, date: Self.date) { return failure }
            return nil
        }
    }

    @Test func getLinkHasTheIssueShape() throws {
        let (status, body, link) = service.handle(
            body: Array(#"{"bucket": "photos", "key": "cat.jpg", "expires": 3600}"#.utf8), date: Self.date)
        #expect(status == 200)
        let url = try #require(link?.url)
        #expect(url.hasPrefix("https://acct.r2.cloudflarestorage.com/photos/cat.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256"))
        #expect(url.contains("X-Amz-Credential=AKID%2F20260301%2Fauto%2Fs3%2Faws4_request"))
        #expect(url.contains("X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature="))
        #expect(body.hasPrefix(#"{"url": ""#))
        #expect(
            body.contains(#""method": "GET", "expires_at": "2026-03-01T01:00:00Z", "expires_in": 3600, "headers": {}}"#)
        )
    }

    @Test func linkMatchesTheSignerDirectly() throws {
        let link = try service.presign(PresignRequest(bucket: "photos", key: "a b/c+d.txt"), date: Self.date).get()
        let signer = try Signer(
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("secret")), region: "auto")
        let direct = try signer.presign(
            method: "GET", host: "acct.r2.cloudflarestorage.com", path: "/photos/a%20b/c%2Bd.txt", expires: 3600,
            date: Self.date)
        #expect(link.url == direct.url)
    }

    @Test func putLinkListsThePinnedHeaders() throws {
        var request = PresignRequest(bucket: "photos", key: "up.jpg", method: "put")
        request.contentType = "image/jpeg"
        request.contentLength = 42
        let link = try service.presign(request, date: Self.date).get()
        #expect(link.method == "PUT")
        #expect(link.headers.map(\.name) == ["Content-Type", "Content-Length"])
        #expect(link.url.contains("X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost"))
        #expect(link.json.contains(#""headers": {"Content-Type": "image/jpeg", "Content-Length": "42"}"#))
    }

    @Test func responseOverridesAreSignedQueryParameters() throws {
        let (_, _, link) = service.handle(
            body: Array(
                #"{"bucket":"photos","key":"k","response_content_disposition":"attachment; filename=a.jpg"}"#.utf8),
            date: Self.date)
        #expect(link?.url.contains("response-content-disposition=attachment%3B%20filename%3Da.jpg") == true)
    }

    @Test func defaultExpiryIsAnHourOrTheBucketMaximum() throws {
        #expect(
            try service.presign(PresignRequest(bucket: "photos", key: "k"), date: Self.date).get().expiresIn == 3600)
        #expect(
            try service.presign(PresignRequest(bucket: "limited", key: "public/k"), date: Self.date).get().expiresIn
                == 600)
    }

    @Test(arguments: [
        (#"{"bucket": "nope", "key": "k"}"#, 404, "NoSuchBucket", "bucket"),
        (#"{"key": "k"}"#, 400, "InvalidArgument", "bucket"),
        (#"{"bucket": "photos"}"#, 400, "InvalidArgument", "key"),
        (#"{"bucket": "photos", "key": ""}"#, 400, "InvalidArgument", "key"),
        (#"{"bucket": "limited", "key": "secret/x"}"#, 403, "AccessDenied", "key"),
        (#"{"bucket": "archive", "key": "k", "method": "PUT"}"#, 403, "AccessDenied", "method"),
        (#"{"bucket": "archive", "key": "k", "method": "DELETE"}"#, 403, "AccessDenied", "method"),
        (#"{"bucket": "limited", "key": "public/k", "method": "HEAD"}"#, 403, "AccessDenied", "method"),
        (#"{"bucket": "photos", "key": "k", "method": "POST"}"#, 400, "InvalidArgument", "method"),
        (#"{"bucket": "photos", "key": "k", "expires": 0}"#, 400, "InvalidArgument", "expires"),
        (#"{"bucket": "photos", "key": "k", "expires": 604801}"#, 400, "InvalidArgument", "expires"),
        (#"{"bucket": "photos", "key": "k", "expires": "8d"}"#, 400, "InvalidArgument", "expires"),
        (#"{"bucket": "photos", "key": "k", "expires": 1.5}"#, 400, "InvalidArgument", "expires"),
        (#"{"bucket": "limited", "key": "public/k", "expires": 601}"#, 400, "InvalidArgument", "expires"),
        (#"{"bucket": "photos", "key": "k", "content_type": "a/b"}"#, 400, "InvalidArgument", "content_type"),
        (
            #"{"bucket": "photos", "key": "k", "method": "PUT", "content_type": "a\nb"}"#, 400, "InvalidArgument",
            "content_type"
        ),
        (
            #"{"bucket": "photos", "key": "k", "method": "DELETE", "response_content_type": "x"}"#, 400,
            "InvalidArgument", "response_content_type"
        ),
        (#"{"bucket": "photos", "key": "k", "content_length": 5}"#, 400, "InvalidArgument", "content_length"),
        (#"{"bucket": "limited", "key": "public/k", "method": "PUT"}"#, 400, "InvalidArgument", "content_length"),
        (
            #"{"bucket": "limited", "key": "public/k", "method": "PUT", "content_length": 1025}"#, 403, "AccessDenied",
            "content_length"
        ),
        (#"{"bucket": "photos", "key": "k", "unknown": 1}"#, 400, "InvalidArgument", "unknown"),
        // Arrays of strings are JSON the API reads (the credentials API's prefixes); as a bucket, a wrong type.
        (#"{"bucket": ["photos"], "key": "k"}"#, 400, "InvalidArgument", "bucket"),
        (#"{"bucket": {"name": "photos"}, "key": "k"}"#, 400, "MalformedJSON", "bucket"),
        (#"{"bucket": "photos", "key": ["k", 1]}"#, 400, "MalformedJSON", "key"),
        (#"{"bucket": "photos", "bucket": "x", "key": "k"}"#, 400, "MalformedJSON", "bucket"),
        (#"{"bucket": true, "key": "k"}"#, 400, "InvalidArgument", "bucket"),
    ])
    func refusalsNameTheField(json: String, status: Int, code: String, field: String) throws {
        let got = try #require(failure(json))
        #expect(got.status == status)
        #expect(got.code == code)
        #expect(got.field == field)
        #expect(got.json.hasPrefix(#"{"error": {"code": ""# + code))
    }

    @Test func sevenDaysIsTheLongestLink() throws {
        var request = PresignRequest(bucket: "photos", key: "k")
        request.expires = 604_800
        #expect(try service.presign(request, date: Self.date).get().expiresIn == 604_800)
    }

    @Test func limitedBucketAllowsWhatItsPolicyAllows() throws {
        var request = PresignRequest(bucket: "limited", key: "public/k", method: "PUT")
        request.contentLength = 1024
        #expect(try service.presign(request, date: Self.date).get().headers.first?.value == "1024")
    }
}

@Suite struct JSONObjectTests {
    @Test func parsesAFlatObject() throws {
        let object = try JSONObject.parse(
            Array(#" { "a": "x\"\\\/\n\u00e9\ud83d\ude00", "n": -12, "f": 1.5e3, "t": true, "z": null } "#.utf8))
        #expect(object["a"] == .string("x\"\\/\n\u{e9}\u{1F600}"))
        #expect(object["n"] == .number("-12"))
        #expect(object["f"] == .number("1.5e3"))
        #expect(object["t"] == .bool(true))
        #expect(object["z"] == .null)
        #expect(JSONObject.integer("-12") == -12)
        #expect(JSONObject.integer("1.5e3") == nil)
    }

    @Test(arguments: [
        "", "[]", "{", #"{"a"}"#, #"{"a": }"#, #"{"a": 01}"#, #"{"a": "\x"}"#, #"{"a": "\ud800"}"#,
        #"{"a": 1,}"#, #"{"a": 1} x"#, "{\"a\": \"\u{1}\"}", #"{"a": {"b": 1}}"#, #"{"a": tru}"#,
    ])
    func rejectsMalformedInput(text: String) {
        #expect(throws: JSONObject.ParseError.self) { try JSONObject.parse(Array(text.utf8)) }
    }

    @Test func writerEscapes() {
        #expect(JSONWriter.render([("k", .string("a\"b\\c\n\u{1}"))]) == #"{"k": "a\"b\\c\n\u0001"}"#)
    }
}

@Suite struct PresignAdminTests {
    @Test func bearerTokenParsing() {
        #expect(BearerToken.parse("Bearer abc") == "abc")
        #expect(BearerToken.parse("bearer  abc ") == "abc")
        #expect(BearerToken.parse("Basic abc") == nil)
        #expect(BearerToken.parse("Bearer ") == nil)
        #expect(BearerToken.parse(nil) == nil)
    }

    @Test func constantTimeComparison() {
        #expect(BearerToken.constantTimeEquals(Array("secret".utf8), Array("secret".utf8)))
        #expect(!BearerToken.constantTimeEquals(Array("secreT".utf8), Array("secret".utf8)))
        #expect(!BearerToken.constantTimeEquals(Array("secret1".utf8), Array("secret".utf8)))
        #expect(!BearerToken.constantTimeEquals(Array("secre".utf8), Array("secret".utf8)))
        #expect(!BearerToken.constantTimeEquals([], []))
    }

    /// Bug b (issue 18): the length check kept only the low byte of `presented.count ^ expected.count`, so a
    /// token 256 (or 512, …) bytes longer that started with the right one was accepted.
    @Test(arguments: [256, 512, 65_536])
    func rejectsATokenWhoseLengthDiffersByAMultipleOf256(extra: Int) {
        let token = Array("secret".utf8)
        let paddedWithZeros = token + [UInt8](repeating: 0, count: extra)
        let paddedWithText = token + [UInt8](repeating: UInt8(ascii: "x"), count: extra)
        let long = [UInt8](repeating: UInt8(ascii: "t"), count: extra + 3)
        let accepted = [
            BearerToken.constantTimeEquals(paddedWithZeros, token),
            BearerToken.constantTimeEquals(paddedWithText, token),
            BearerToken.constantTimeEquals(Array(long.prefix(3)), long),
        ]
        #expect(accepted == [false, false, false])
    }

    @Test func readsTheTokenFilesFirstLineTrimmed() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("token", " \tsecret-token \r\nsecond line\n")
        #expect(AdminServer.readToken(path) == Array("secret-token".utf8))
    }

    @Test func refusesAMissingOrBlankTokenFile() throws {
        let directory = try TemporaryDirectory()
        #expect(AdminServer.readToken(directory.path + "/missing") == nil)
        #expect(AdminServer.readToken(try directory.write("blank", " \t\nsecond line\n")) == nil)
    }

    @Test(arguments: [
        ("127.0.0.1:9180", true), ("localhost:9180", true), ("[::1]:9180", true), ("localhost", true),
        ("attacker.example", false), ("attacker.example:9180", false), ("", false),
    ])
    func loopbackHostCheck(host: String, isLocal: Bool) {
        #expect(AdminServer.isLocalHost(host) == isLocal)
    }
}
