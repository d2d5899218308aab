import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// R2's details (issue 21 §5): its documented `cf-*` extensions forwarded and signed to R2 only, the one that
/// creates a bucket judged as CreateBucket, and what R2 does not implement answered locally.
@Suite struct R2ExtensionsTests {
    static func settings(isR2: Bool = true, allowCreateBucket: Bool = false) -> ProxySettings {
        var target = UpstreamTarget(
            name: "r2", usesTLS: true, host: "acct.r2.cloudflarestorage.com", port: 443,
            hostHeader: "acct.r2.cloudflarestorage.com", region: "auto",
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("secret")), tls: nil)
        target.isR2 = isR2
        var route = BucketRoute(name: "photos", upstreamIndex: 0, mount: Array("/photos".utf8), isReadOnly: false)
        if allowCreateBucket, let action = ActionPattern("s3:CreateBucket") { route.policy.allowedActions = [action] }
        return ProxySettings(upstreams: [target], routes: [route], limits: ClientLimits())
    }

    static func rewrite(_ method: String, _ target: String, _ headers: [(String, String)], settings: ProxySettings)
        -> Result<ForwardPlan, ProxyError>
    {
        var all = HTTPHeaders([("Host", "127.0.0.1:8080")])
        for (name, value) in headers { all.add(name: name, value: value) }
        let head = RequestHead(method: method, target: target, headers: all)
        do throws(ProxyError) {
            let framing: BodyFraming = method == "PUT" ? .contentLength(3) : .none
            guard
                case .forward(let plan) = try RequestRewriter.rewrite(head: head, framing: framing, settings: settings)
            else { return .failure(.internalError("not forwarded")) }
            return .success(plan)
        } catch {
            return .failure(error)
        }
    }

    static func forwardedNames(_ result: Result<ForwardPlan, ProxyError>) -> [String] {
        guard case .success(let plan) = result else { return [] }
        return plan.request.headers.map { ASCII.lowercased($0.name) }
    }

    @Test func forwardsTheDocumentedCopyConditionsToR2AndStripsTheRest() {
        let headers = [
            ("x-amz-copy-source", "/photos/a.jpg"), ("cf-copy-destination-if-none-match", "*"),
            ("CF-Connecting-IP", "1.2.3.4"), ("cf-ray", "x"),
        ]
        let names = Self.forwardedNames(Self.rewrite("PUT", "/photos/b.jpg", headers, settings: Self.settings()))
        #expect(names.contains("cf-copy-destination-if-none-match"))
        #expect(!names.contains("cf-connecting-ip") && !names.contains("cf-ray"))
        let toS3 = Self.forwardedNames(
            Self.rewrite("PUT", "/photos/b.jpg", headers, settings: Self.settings(isR2: false)))
        #expect(!toS3.contains { $0.hasPrefix("cf-") })
        #expect(toS3.contains("x-amz-copy-source"))
    }

    @Test func createBucketIfMissingNeedsCreateBucket() {
        let header = [("cf-create-bucket-if-missing", "true")]
        guard
            case .failure(.policyDenied(let denial, let operation)) = Self.rewrite(
                "PUT", "/photos/new.jpg", header, settings: Self.settings())
        else {
            Issue.record("not denied")
            return
        }
        #expect(operation == "PutObject")
        #expect(denial.message.contains("s3:CreateBucket"))
        let allowed = Self.rewrite("PUT", "/photos/new.jpg", header, settings: Self.settings(allowCreateBucket: true))
        #expect(Self.forwardedNames(allowed).contains("cf-create-bucket-if-missing"))
    }

    @Test func theSignerSignsTheForwardedExtension() throws {
        let plan = try Self.rewrite(
            "PUT", "/photos/new.jpg", [("cf-create-bucket-if-missing", "true")],
            settings: Self.settings(allowCreateBucket: true)
        ).get()
        let signer = try Signer(
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("s")), region: "auto")
        var head: [UInt8] = []
        try signer.signHead(plan.request, payload: plan.payload, date: AmzDate(epochSeconds: 0), into: &head)
        let text = String(decoding: head, as: UTF8.self)
        #expect(text.contains("SignedHeaders=cf-create-bucket-if-missing;"))
    }

    @Test(arguments: ["/photos?tagging", "/photos/a.jpg?tagging", "/photos?versioning", "/photos?policy"])
    func answersUnimplementedOperationsLocally(target: String) {
        var settings = Self.settings()
        let policy = ["s3:*"].compactMap(ActionPattern.init)
        var route = settings.router.routes[0]
        route.policy.allowedActions = policy
        settings = ProxySettings(upstreams: settings.upstreams, routes: [route], limits: ClientLimits())
        guard case .failure(.notImplemented(let message)) = Self.rewrite("GET", target, [], settings: settings) else {
            Issue.record("\(target) was not answered NotImplemented")
            return
        }
        #expect(message.contains("Cloudflare R2 does not implement"))
        var s3 = settings.upstreams[0]
        s3.isR2 = false
        let toS3 = ProxySettings(upstreams: [s3], routes: [route], limits: ClientLimits())
        if case .failure(.notImplemented) = Self.rewrite("GET", target, [], settings: toS3) {
            Issue.record("\(target) refused for S3")
        }
    }

    @Test func answersIgnoredWriteHeadersLocally() {
        #expect(
            R2Compatibility.unsupported(.putObject, headers: HTTPHeaders([("X-Amz-Tagging", "a=b")]))?.contains(
                "x-amz-tagging") == true)
        #expect(
            R2Compatibility.unsupported(.putObject, headers: HTTPHeaders([("x-amz-server-side-encryption", "aws:kms")]))
                != nil)
        #expect(
            R2Compatibility.unsupported(.putObject, headers: HTTPHeaders([("x-amz-server-side-encryption", "AES256")]))
                == nil)
        #expect(R2Compatibility.unsupported(.getObject, headers: HTTPHeaders([("x-amz-tagging", "a=b")])) == nil)
        #expect(R2Compatibility.unsupported(.putObject, headers: HTTPHeaders([("x-amz-meta-a", "b")])) == nil)
    }
}

/// `cf-create-bucket-if-missing` needs the action it performs, whatever its letter case.
@Suite struct CreateBucketHeaderTests {
    @Test func theHeaderAsksForCreateBucket() throws {
        let facts = try RequestHardening.checkHeaders(HTTPHeaders([("CF-Create-Bucket-If-Missing", "true")]))
        #expect(facts.headerActions == ["s3:CreateBucket"])
        let none = try RequestHardening.checkHeaders(HTTPHeaders([("cf-ray", "x"), ("Content-Type", "a/b")]))
        #expect(none.headerActions.isEmpty)
    }
}
