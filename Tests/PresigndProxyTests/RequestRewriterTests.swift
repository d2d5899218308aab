import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4
import Testing

@testable import PresigndProxy

@Suite struct RequestRewriterTests {
    static func settings(forwardsAWSChunked: Bool = false, readOnly: Bool = false) -> ProxySettings {
        var target = UpstreamTarget(
            name: "r2", usesTLS: true, host: "acct.r2.cloudflarestorage.com", port: 443,
            hostHeader: "acct.r2.cloudflarestorage.com", region: "auto",
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("secret")), tls: nil)
        target.forwardsAWSChunked = forwardsAWSChunked
        let route = BucketRoute(name: "photos", upstreamIndex: 0, mount: Array("/photos".utf8), isReadOnly: readOnly)
        return ProxySettings(upstreams: [target], routes: [route], limits: ClientLimits())
    }

    static func head(_ method: String, _ target: String, _ headers: [(String, String)] = []) -> RequestHead {
        var all = HTTPHeaders([("Host", "127.0.0.1:8080")])
        for (name, value) in headers { all.add(name: name, value: value) }
        return RequestHead(method: method, target: target, headers: all)
    }

    static func plan(_ head: RequestHead, framing: BodyFraming = .none, settings: ProxySettings = settings())
        -> ForwardPlan?
    {
        guard case .forward(let plan)? = try? RequestRewriter.rewrite(head: head, framing: framing, settings: settings)
        else { return nil }
        return plan
    }

    static func error(_ head: RequestHead, framing: BodyFraming = .none, settings: ProxySettings = settings())
        -> ProxyError?
    {
        do throws(ProxyError) {
            _ = try RequestRewriter.rewrite(head: head, framing: framing, settings: settings)
            return nil
        } catch {
            return error
        }
    }

    @Test func stripsHopByHopClientAuthAndConnectionListedHeaders() throws {
        let plan = try #require(
            Self.plan(
                Self.head(
                    "GET", "/photos/cat.jpg",
                    [
                        ("Authorization", "AWS4-HMAC-SHA256 Credential=x"), ("X-Amz-Security-Token", "t"),
                        ("Connection", "keep-alive, X-Secret-Hop"), ("X-Secret-Hop", "1"), ("Keep-Alive", "5"),
                        ("Proxy-Authorization", "Basic x"), ("TE", "trailers"), ("Expect", "100-continue"),
                        ("Range", "bytes=0-9"), ("User-Agent", "curl"),
                    ])))
        let names = plan.request.headers.map { $0.name.lowercased() }
        for stripped in [
            "authorization", "x-amz-security-token", "connection", "x-secret-hop", "keep-alive",
            "proxy-authorization", "te", "expect",
        ] {
            #expect(!names.contains(stripped), "\(stripped) must not be forwarded")
        }
        #expect(names.contains("range"))
        #expect(plan.request.headers.first?.value == "acct.r2.cloudflarestorage.com")
        #expect(plan.payload == .emptyBody)
        #expect(plan.request.path == "/photos/cat.jpg")
    }

    @Test func removesPresignQueryParametersAndKeepsTheRest() throws {
        let plan = try #require(
            Self.plan(
                Self.head(
                    "GET",
                    "/photos?list-type=2&X-Amz-Signature=abc&x-amz-credential=k&prefix=a%2Fb&X-Amz-Expires=5")))
        #expect(plan.request.query.map(\.name) == ["list-type", "prefix"])
        #expect(plan.request.query.last?.value == "a/b")
    }

    @Test func decodesOnceAndReencodesThePath() throws {
        let plan = try #require(Self.plan(Self.head("GET", "/photos/a%2cb/%41!'+")))
        #expect(plan.request.path == "/photos/a%2Cb/A%21%27%2B")
    }

    @Test func keepsAClientPayloadHashAndTheContentLength() throws {
        let hash = String(repeating: "ab", count: 32)
        let plan = try #require(
            Self.plan(
                Self.head("PUT", "/photos/a", [("x-amz-content-sha256", hash), ("Content-MD5", "md5==")]),
                framing: .contentLength(5)))
        #expect(plan.payload == .sha256(hex: hash))
        #expect(plan.body == .stream)
        #expect(plan.request.headers.contains { $0.name == "Content-Length" && $0.value == "5" })
        #expect(plan.request.headers.contains { $0.name == "Content-MD5" })
    }

    @Test func spoolsLengthlessUploads() throws {
        let plan = try #require(Self.plan(Self.head("PUT", "/photos/a"), framing: .chunked))
        #expect(plan.body == .spool(unwrapsAWSChunked: false, decodedLength: nil))
        #expect(!plan.request.headers.contains { $0.name.lowercased() == "content-length" })
    }

    @Test func unwrapsAWSChunkedForUpstreamsThatRefuseIt() throws {
        let head = Self.head(
            "PUT", "/photos/a",
            [
                ("Content-Encoding", "aws-chunked,gzip"),
                ("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
                ("x-amz-decoded-content-length", "11"), ("x-amz-trailer", "x-amz-checksum-crc32"),
            ])
        let plan = try #require(Self.plan(head, framing: .contentLength(60)))
        #expect(plan.body == .decodeAWSChunked(AWSChunkedPlan(decodedLength: 11, checksum: .crc32, reframes: false)))
        #expect(plan.payload == .unsigned)
        #expect(plan.request.headers.contains { $0.name == "Content-Length" && $0.value == "11" })
        let names = plan.request.headers.map { $0.name.lowercased() }
        #expect(!names.contains("x-amz-trailer"))
        #expect(!names.contains("x-amz-decoded-content-length"))
        #expect(plan.request.headers.first { $0.name == "Content-Encoding" }?.value == "gzip")

        let forwarded = try #require(
            Self.plan(head, framing: .contentLength(60), settings: Self.settings(forwardsAWSChunked: true)))
        #expect(forwarded.body == .stream)
        #expect(forwarded.payload == .streamingUnsignedTrailer)
        #expect(forwarded.request.headers.contains { $0.name == "x-amz-trailer" })
    }

    @Test func refusesOtherHostsAndConnect() {
        #expect(Self.error(Self.head("GET", "http://evil.example/photos/a")) != nil)
        #expect(Self.error(Self.head("CONNECT", "evil.example:443")) != nil)
        #expect(Self.plan(Self.head("GET", "http://127.0.0.1:8080/photos/a")) != nil)
    }

    /// Scheme and host compare ignoring ASCII case only (RFC 3986 §3.1, §3.2.2): a Unicode fold would take
    /// U+212A KELVIN SIGN for `k`.
    @Test func matchesAbsoluteFormSchemeAndHostIgnoringASCIICaseOnly() {
        func head(_ target: String, host: String) -> RequestHead {
            RequestHead(method: "GET", target: target, headers: ["Host": host])
        }
        let plan = Self.plan(head("HTTPS://Bucket.Example:8080/photos/a", host: "bucket.example:8080"))
        #expect(plan?.request.path == "/photos/a")
        #expect(Self.plan(head("http://Bucket.Example", host: "bucket.example")) == nil, "the service root")
        #expect(Self.error(head("http://\u{212A}.example/photos/a", host: "k.example")) != nil)
        #expect(Self.error(head("ftp://bucket.example/photos/a", host: "bucket.example")) != nil)
    }

    @Test func answersUnknownBucketsAndPolicyDenials() {
        #expect(Self.error(Self.head("GET", "/other/a")) == .noSuchBucket("other"))
        guard
            case .policyDenied(let denial, "PutObject") = Self.error(
                Self.head("PUT", "/photos/a"), settings: Self.settings(readOnly: true)),
            denial.reason == .action
        else {
            Issue.record("a write to a read-only bucket must be denied")
            return
        }
        #expect(Self.error(Self.head("GET", "/photos/%zz")) != nil)
    }

    @Test(arguments: [
        ("/a/b?x=1#frag", "/a/b", "x=1"), ("/a/b", "/a/b", ""), ("/a?", "/a", ""), ("/a#x?y", "/a", ""),
        ("/?list-type=2&prefix=%C3%A9", "/", "list-type=2&prefix=%C3%A9"),
    ])
    func splitsTargetsAtTheFirstQuestionMarkBeforeAnyFragment(target: String, path: String, query: String) {
        let (gotPath, gotQuery) = RequestRewriter.splitTarget(target[...])
        #expect(String(gotPath) == path)
        #expect(String(gotQuery) == query)
    }

    @Test func splitsASubstringThatDoesNotStartAtItsBase() {
        let whole = "GET /a/é?x=1&y=?#frag HTTP/1.1"
        let target = whole.dropFirst(4).prefix(while: { $0 != " " })
        let (path, query) = RequestRewriter.splitTarget(target)
        #expect(String(path) == "/a/é" && String(query) == "x=1&y=?")
    }
}
