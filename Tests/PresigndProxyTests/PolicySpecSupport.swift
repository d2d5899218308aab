import PresigndConfig
import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// One row of the policy spec: a request as a client sends it, who sends it, and what the policy must decide.
struct PolicySpecRow: CustomTestStringConvertible, Sendable {
    var method: String
    var target: String
    var headers: [(String, String)]
    var body: String?
    var principal: Principal
    /// An `S3Operation` name or "unknown".
    var operation: String
    /// "allow", or the refusal: "403", "400 InvalidURI", …
    var decision: String

    var testDescription: String { "\(method) \(target) as \(principal) → \(operation) \(decision)" }

    static let ciToken = "ci-token-0123456789"
    static let user = Principal(peer: .unix(uid: 1000, gid: 1000, pid: 1))
    static let otherUser = Principal(peer: .unix(uid: 1001, gid: 50, pid: 2))
    static let lan = Principal(peer: .tcp(IPAddress("10.1.2.3")!))
    static let wan = Principal(peer: .tcp(IPAddress("203.0.113.9")!))
}

/// `"PUT /rw/k" → "PutObject" "allow"`, with headers, a body and a principal when the row needs them.
func spec(
    _ request: String, _ operation: String, _ decision: String, headers: [(String, String)] = [],
    body: String? = nil, as principal: Principal = PolicySpecRow.user
) -> PolicySpecRow {
    let parts = request.split(separator: " ", maxSplits: 1)
    return PolicySpecRow(
        method: String(parts[0]), target: String(parts[1]), headers: headers, body: body, principal: principal,
        operation: operation, decision: decision)
}

enum PolicySpecSettings {
    /// Buckets for the spec: `rw`, `ro`, `pfx` (prefix incoming/), `admin` (named bucket actions), `meth`
    /// (allowed_methods), `acl` (s3:PutObjectAcl), `users` (uid 1000, gid 50), `net` (10.0.0.0/8), `src`
    /// (read-only, shared/), `far` (another upstream), `tok` (the bearer token `ci`), `redir` (redirect mode, read-only, pub/),
    /// `lock` (Object Lock retention and bypass named).
    static let settings: ProxySettings = {
        func target(_ name: String) -> UpstreamTarget {
            UpstreamTarget(
                name: name, usesTLS: true, host: "\(name).example", port: 443, hostHeader: "\(name).example",
                region: "auto", credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("s")), tls: nil)
        }
        func route(
            _ name: String, readOnly: Bool = false, upstream: Int = 0, _ change: (inout BucketRoute) -> Void = { _ in }
        )
            -> BucketRoute
        {
            var route = BucketRoute(
                name: name, upstreamIndex: upstream, mount: Array("/\(name)".utf8), isReadOnly: readOnly)
            change(&route)
            return route
        }
        let routes = [
            route("rw"),
            route("ro", readOnly: true),
            route("pfx") { $0.allowedPrefixes = ["incoming/"] },
            route("admin") {
                $0.policy.allowedActions = ["s3:PutBucketPolicy", "s3:GetBucket*", "s3:PutLifecycleConfiguration"]
                    .compactMap(ActionPattern.init)
                $0.policy.deniedActions = ["s3:DeleteObject*", "s3:PutObjectTagging"].compactMap(ActionPattern.init)
            },
            route("meth") { $0.allowedMethods = ["GET", "HEAD", "PUT"] },
            route("acl") { $0.policy.allowedActions = [ActionPattern("s3:PutObjectAcl")!] },
            route("users") { $0.principals = [.uid(1000), .gid(50)] },
            route("net", readOnly: true) { $0.principals = [.cidr(CIDR("10.0.0.0/8")!)] },
            route("src", readOnly: true) { $0.allowedPrefixes = ["shared/"] },
            route("far", upstream: 1),
            route("tok") { $0.principals = [.token("ci")] },
            route("lock") {
                $0.policy.allowedActions = ["s3:PutObjectRetention", "s3:BypassGovernanceRetention"]
                    .compactMap(ActionPattern.init)
            },
            route("redir", readOnly: true) {
                $0.redirect = true
                $0.allowedPrefixes = ["pub/"]
            },
        ]
        return ProxySettings(
            upstreams: [target("main"), target("far")], routes: routes, limits: ClientLimits(),
            tokens: [("ci", Array(PolicySpecRow.ciToken.utf8)), ("other", Array("other-token-0123456789".utf8))])
    }()

    static func explain(_ row: PolicySpecRow) -> PolicyExplanation {
        var headers = HTTPHeaders([("Host", "127.0.0.1:8080")])
        for (name, value) in row.headers { headers.add(name: name, value: value) }
        let head = RequestHead(method: row.method, target: row.target, headers: headers)
        return PolicyExplanation(
            head: head, body: row.body.map { Array($0.utf8) }, principal: row.principal, settings: settings)
    }
}
