/// What a classified request touches, as the engine judges it.
public struct PolicyRequest: Sendable {
    public var method: String
    public var operation: ClassifiedOperation
    /// The decoded object key; empty for bucket-level operations.
    public var key: ArraySlice<UInt8>
    /// Every `prefix` query value (a repeated parameter is forwarded, so each must pass).
    public var listPrefixes: [String]
    /// `x-amz-acl` or an `x-amz-grant-*` header is present.
    public var setsACL: Bool
    /// Actions the request's headers need besides the operation's own (`RequestHardening.HeaderFacts`).
    public var headerActions: [String]

    public init(
        method: String, operation: ClassifiedOperation, key: ArraySlice<UInt8> = [], listPrefixes: [String] = [],
        setsACL: Bool = false, headerActions: [String] = []
    ) {
        self.headerActions = headerActions
        self.method = method
        self.operation = operation
        self.key = key
        self.listPrefixes = listPrefixes
        self.setsACL = setsACL
    }
}

/// The one policy engine (issue 19): the proxy, redirect mode and the presign API all ask it. Pure.
public enum PolicyEngine {
    /// The rule that allows the request, or the denial. Keys in a DeleteObjects body and copy sources are
    /// checked by `checkKeys` and `checkCopySource` once they are known.
    public static func decide(_ request: PolicyRequest, policy: BucketPolicy) throws(PolicyDenial) -> String {
        let rule = try permit(request.operation.action, operation: request.operation.operation, policy: policy)
        if !policy.allowedMethods.isEmpty {
            let method = request.operation.operation.aliasMethod(httpMethod: request.method)
            guard policy.allowedMethods.contains(method) else {
                throw PolicyDenial(
                    .allowedMethods, rule: "allowed_methods",
                    "\(request.operation.operation.rawValue) counts as \(method), which is not in allowed_methods "
                        + "of bucket '\(policy.bucket)'")
            }
        }
        if request.setsACL {
            // Canned ACLs and grants can make data public: only with the ACL action named. On CreateBucket and
            // PutBucketAcl they set the bucket's ACL, elsewhere the object's.
            let isBucketACL =
                request.operation.operation == .createBucket || request.operation.operation == .putBucketAcl
            let aclAction = isBucketACL ? "s3:PutBucketAcl" : "s3:PutObjectAcl"
            do {
                _ = try permit(aclAction, operation: isBucketACL ? .putBucketAcl : .putObjectAcl, policy: policy)
            } catch {
                throw PolicyDenial(
                    .aclHeader, rule: error.rule,
                    "x-amz-acl and x-amz-grant-* headers need \(aclAction) on bucket '\(policy.bucket)'")
            }
        }
        for action in request.headerActions {
            // A header that tags, retains or holds the object needs the action the operation of that name would.
            do {
                _ = try permit(action, operation: request.operation.operation, policy: policy)
            } catch {
                throw PolicyDenial(
                    .headerAction, rule: error.rule,
                    "the request's headers need \(action) on bucket '\(policy.bucket)'")
            }
        }
        guard !policy.allowedPrefixes.isEmpty else { return rule }
        let operation = request.operation.operation
        if operation.isListing {
            guard !request.listPrefixes.isEmpty else {
                throw PolicyDenial(
                    .prefix, rule: "allowed_prefixes",
                    "a listing of bucket '\(policy.bucket)' must name a prefix inside allowed_prefixes")
            }
            for prefix in request.listPrefixes where !policy.allowsKey(prefix.utf8) {
                throw PolicyDenial(.prefix, rule: "allowed_prefixes", "listing outside the allowed prefixes")
            }
        } else if !request.key.isEmpty && !policy.allowsKey(request.key) {
            throw PolicyDenial(.prefix, rule: "allowed_prefixes", "key outside the allowed prefixes")
        }
        return rule
    }

    /// Whether the bucket's actions allow `action`: `denied_actions` first, then `access`, then `allowed_actions`.
    public static func permit(_ action: String, operation: S3Operation, policy: BucketPolicy) throws(PolicyDenial)
        -> String
    {
        if let pattern = policy.deniedActions.first(where: { $0.matches(action) }) {
            throw PolicyDenial(
                .deniedAction, rule: "denied_actions \"\(pattern)\"",
                "\(action) (\(operation.rawValue)) is in denied_actions of bucket '\(policy.bucket)'")
        }
        if policy.access.grants(action) { return policy.access.rule }
        if let pattern = policy.allowedActions.first(where: { $0.matches(action) }) {
            return "allowed_actions \"\(pattern)\""
        }
        throw PolicyDenial(
            .action, rule: policy.access.rule,
            "\(action) (\(operation.rawValue)) is not allowed on bucket '\(policy.bucket)' (access = "
                + "\"\(policy.access.rawValue)\"; name it in allowed_actions to grant it)")
    }

    /// Each key of a DeleteObjects body must be inside the prefixes: one outside denies the whole request.
    public static func checkKeys(_ keys: [String], policy: BucketPolicy) throws(PolicyDenial) {
        if let outside = keys.first(where: { !policy.allowsKey($0.utf8) }) {
            throw PolicyDenial(
                .prefix, rule: "allowed_prefixes",
                "DeleteObjects names key '\(outside)' outside the allowed prefixes of bucket '\(policy.bucket)'")
        }
    }

    /// A copy source is read with presignd's keys: the same principal must be allowed to read it there.
    public static func checkCopySource(key: [UInt8], isVersioned: Bool, sourcePolicy: BucketPolicy)
        throws(PolicyDenial)
    {
        let read = ClassifiedOperation(
            operation: .getObject, action: isVersioned ? "s3:GetObjectVersion" : "s3:GetObject")
        do {
            _ = try decide(PolicyRequest(method: "GET", operation: read, key: key[...]), policy: sourcePolicy)
        } catch {
            throw PolicyDenial(.copySource, rule: error.rule, "copy source: " + error.message)
        }
    }
}
