import PresigndConfig
import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4

/// The presign policy (issue 7): the policy engine's decision for the operation the link performs (issue 19),
/// `max_upload_size` and `max_presign_expiry`, plus R2's limits; names the field at fault.
extension PresignService {
    /// The methods R2 and S3 presign (R2 has no presigned POST).
    static let presignableMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE"]
    /// S3's longest key, bytes.
    static let maximumKeyBytes = 1024

    /// The route to sign for, or why not.
    static func check(
        _ request: PresignRequest, routes: [BucketRoute], principal: Principal = Principal(peer: .unknown)
    ) -> Result<BucketRoute, PresignFailure> {
        guard !request.bucket.isEmpty else { return .failure(.invalid("bucket", "bucket is required")) }
        guard let route = routes.first(where: { $0.name == request.bucket }) else {
            return .failure(
                PresignFailure(
                    status: 404, code: "NoSuchBucket", field: "bucket",
                    message: "bucket '\(request.bucket)' is not configured"))
        }
        let method = ASCII.uppercased(request.method)
        guard presignableMethods.contains(method) else {
            return .failure(.invalid("method", "method must be GET, HEAD, PUT or DELETE, got '\(request.method)'"))
        }
        guard !request.key.isEmpty else { return .failure(.invalid("key", "key is required")) }
        guard request.key.utf8.count <= maximumKeyBytes else {
            return .failure(.invalid("key", "key is longer than \(maximumKeyBytes) bytes"))
        }
        // The same engine as proxied requests (issue 19 §6): a DELETE link needs s3:DeleteObject.
        do throws(PolicyDenial) {
            try RequestHardening.checkPath(request.key.utf8)
            try RequestRewriter.checkPrincipal(principal, route: route)
            let operation = try OperationClassifier.classify(
                method: method, hasKey: true, queryNames: request.versionID == nil ? [] : ["versionId"])
            _ = try PolicyEngine.decide(
                PolicyRequest(method: method, operation: operation, key: Array(request.key.utf8)[...]),
                policy: route.policy)
        } catch {
            if error.isMalformed { return .failure(.invalid("key", error.message)) }
            let field = error.reason == .prefix ? "key" : error.reason == .principal ? "principal" : "method"
            return .failure(.denied(field, error.message + " (rule: \(error.rule))"))
        }
        if let expires = request.expires {
            guard expires >= 1 else { return .failure(.invalid("expires", "expires must be at least 1 second")) }
            guard expires <= Signer.maximumExpiry else {
                return .failure(
                    .invalid("expires", "expires \(expires) is beyond 7 days (604800 s), the S3/R2 maximum"))
            }
            guard expires <= route.maxPresignExpiry else {
                return .failure(
                    .invalid(
                        "expires",
                        "expires \(expires) is beyond max_presign_expiry of bucket '\(route.name)' "
                            + "(\(route.maxPresignExpiry) s)"))
            }
        }
        let isRead = method == "GET" || method == "HEAD"
        if !isRead, let name = request.responseOverrides.first?.name {
            return .failure(.invalid(fieldName(query: name), "response overrides apply to GET and HEAD links only"))
        }
        if method != "PUT" {
            if request.contentType != nil {
                return .failure(.invalid("content_type", "content_type can be pinned on PUT links only"))
            }
            if request.contentLength != nil {
                return .failure(.invalid("content_length", "content_length can be pinned on PUT links only"))
            }
        }
        if method == "PUT", request.versionID != nil {
            return .failure(.invalid("version_id", "version_id does not apply to PUT"))
        }
        if let type = request.contentType, type.isEmpty || !type.isHeaderValue {
            return .failure(.invalid("content_type", "content_type must be non-empty printable ASCII"))
        }
        if let length = request.contentLength, length < 0 {
            return .failure(.invalid("content_length", "content_length must not be negative"))
        }
        if method == "PUT", let limit = route.maxUploadSize {
            // The upload bypasses presignd, so the size limit is enforced by signing the length.
            guard let length = request.contentLength else {
                return .failure(
                    .invalid(
                        "content_length",
                        "bucket '\(route.name)' has max_upload_size; PUT links must pin content_length"))
            }
            guard length <= limit else {
                return .failure(
                    .denied("content_length", "content_length \(length) exceeds max_upload_size (\(limit) bytes)"))
            }
        }
        return .success(route)
    }

    /// `response-content-type` → `response_content_type` (the JSON field name).
    static func fieldName(query name: String) -> String {
        String(name.map { $0 == "-" ? "_" : $0 })
    }
}

extension String {
    /// Byte-wise prefix test (keys are compared as UTF-8 bytes, never normalized).
    func hasPrefixBytes(_ prefix: String) -> Bool { utf8.starts(with: prefix.utf8) }

    /// Visible ASCII and spaces only: a value a client can send unchanged as a header.
    var isHeaderValue: Bool { utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
}
