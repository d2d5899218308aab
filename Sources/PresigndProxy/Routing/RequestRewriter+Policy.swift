import PresigndConfig
import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4

/// What the policy engine allowed: for the access log, `presignd explain` and the DeleteObjects body check.
struct PolicyVerdict: Equatable {
    var operation: S3Operation
    var action: String
    /// The rule that allowed it (`access = "read-write"`, `allowed_actions "s3:PutBucketPolicy"`).
    var rule: String
    /// The `[token.NAME]` the request presented, if any.
    var token: String? = nil
}

/// The policy step of the rewrite (issue 19): hardening, the operation, the principal, the engine.
extension RequestRewriter {
    /// Classifies the request and asks the engine. `query` has the presign parameters removed already.
    static func authorize(
        head: RequestHead, route: BucketRoute, key: ArraySlice<UInt8>, query: [QueryParameter], principal: Principal
    ) throws(ProxyError) -> PolicyVerdict {
        var operation: ClassifiedOperation? = nil
        do throws(PolicyDenial) {
            let headers = try RequestHardening.checkHeaders(head.headers)
            let classified = try OperationClassifier.classify(
                method: head.method, hasKey: !key.isEmpty, queryNames: query.isEmpty ? [] : query.map(\.name),
                listType: query.first(where: { $0.name == "list-type" })?.value, hasCopySource: headers.hasCopySource,
                hasCopySourceRange: headers.hasCopySourceRange)
            operation = classified
            try checkPrincipal(principal, route: route)
            // Every `prefix` a listing names must pass, not just the first (a repeated key is forwarded).
            let request = PolicyRequest(
                method: head.method, operation: classified, key: key,
                listPrefixes: query.filter { $0.name == "prefix" }.map(\.value), setsACL: headers.setsACL,
                headerActions: headers.headerActions)
            let rule = try PolicyEngine.decide(request, policy: route.policy)
            return PolicyVerdict(
                operation: classified.operation, action: classified.action, rule: rule, token: principal.token)
        } catch {
            throw .policyDenied(error, operation: operation?.operation.rawValue ?? "unknown")
        }
    }

    /// The connection's principal, named by a `[token.NAME]` when the request presents its bearer token. A
    /// bearer token presignd does not know is refused rather than ignored. (SigV4 `Authorization` headers are not
    /// bearer tokens: they are stripped as before.)
    static func identify(_ principal: Principal, head: RequestHead, settings: ProxySettings) throws(ProxyError)
        -> Principal
    {
        guard let presented = BearerToken.parse(head.headers["authorization"]) else { return principal }
        guard let name = settings.tokenName(presented: presented) else {
            throw .policyDenied(
                PolicyDenial(.principal, rule: "token", "the bearer token is not one of presignd's [token.NAME]"),
                operation: "unknown")
        }
        var named = principal
        named.token = name
        return named
    }

    /// `allow`: a bucket with a list is only for the principals it names.
    static func checkPrincipal(_ principal: Principal, route: BucketRoute) throws(PolicyDenial) {
        guard !route.principals.isEmpty, !route.principals.contains(where: { $0.matches(principal) }) else { return }
        throw PolicyDenial(
            .principal, rule: "allow",
            "\(principal) is not in the allow list of bucket '\(route.name)'")
    }

    /// Path and query refusals that hold for every bucket; `queryNames` before presign parameters are removed.
    static func harden(decodedPath: [UInt8], queryNames: [String]) throws(ProxyError) {
        do throws(PolicyDenial) {
            try RequestHardening.checkPath(decodedPath)
            try RequestHardening.checkQuery(queryNames)
        } catch {
            throw .policyDenied(error, operation: "unknown")
        }
    }

    /// DeleteObjects: the body is read whole before anything goes upstream (spooled, bounded), and the policy
    /// its keys are checked against once it is. The same bytes are sent, so Content-MD5 and checksums stay valid.
    static func planDeleteBody(
        _ verdict: PolicyVerdict, route: BucketRoute, framing: BodyFraming, body: inout BodyPlan
    ) throws(ProxyError) -> BucketPolicy? {
        guard verdict.operation == .deleteObjects else { return nil }
        guard framing != .none else {
            throw .policyDenied(DeleteObjectsBody.malformed("no body"), operation: verdict.operation.rawValue)
        }
        if case .contentLength(let length) = framing {
            guard length <= DeleteObjectsBody.maximumSize else { throw .entityTooLarge }
            if body == .stream { body = .spool(unwrapsAWSChunked: false, decodedLength: nil) }
        }
        return route.policy
    }

    /// A DeleteObjects body, read whole: every key it names must be inside the bucket's prefixes.
    static func checkDeleteBody(_ body: [UInt8], policy: BucketPolicy) throws(ProxyError) -> [String] {
        do throws(PolicyDenial) {
            let keys = try DeleteObjectsBody.keys(body)
            for key in keys { try RequestHardening.checkPath(key.utf8) }
            try PolicyEngine.checkKeys(keys, policy: policy)
            return keys
        } catch {
            throw .policyDenied(error, operation: S3Operation.deleteObjects.rawValue)
        }
    }
}
