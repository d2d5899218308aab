import PresigndHTTP1

/// Refusals that hold whatever the bucket's policy says (issue 19 §4): forms some S3-compatible servers read
/// differently from S3, or that would smuggle a meaning past the classifier.
public enum RequestHardening {
    /// Method-override headers: some frameworks run the overriding method instead of the request's.
    static let methodOverrideHeaders = ["x-http-method-override", "x-http-method", "x-method-override"]

    /// Refuses `.` and `..` path segments (the path already percent-decoded, so `%2e%2E` is caught too): S3
    /// and R2 keep keys literal, other servers normalize them into another key.
    /// Inlinable so that it is specialized for the caller's collection: the generic `split` it replaced cost more
    /// than signing the request.
    @inlinable
    public static func checkPath(_ decodedPath: some Collection<UInt8>) throws(PolicyDenial) {
        var length = 0
        var onlyDots = true
        for byte in decodedPath {
            if byte == UInt8(ascii: "/") {
                if onlyDots && (length == 1 || length == 2) { throw dotSegmentDenial }
                length = 0
                onlyDots = true
            } else {
                length += 1
                onlyDots = onlyDots && byte == UInt8(ascii: ".")
            }
        }
        if onlyDots && (length == 1 || length == 2) { throw dotSegmentDenial }
    }

    @usableFromInline static var dotSegmentDenial: PolicyDenial {
        PolicyDenial(.dotSegment, rule: "hardening", "'.' and '..' path segments are refused (raw or percent-encoded)")
    }

    /// Refuses SigV2 query authentication and headers given as query parameters (`x-amz-copy-source`,
    /// `x-amz-acl`, `x-amz-grant-*`), which S3 honours from the query as from headers.
    public static func checkQuery(_ names: [String]) throws(PolicyDenial) {
        var hasSigV2 = false
        var hasExpires = false
        var hasSigV4 = false
        for name in names {
            if name == "AWSAccessKeyId" || name == "Signature" { hasSigV2 = true }
            if name == "Expires" { hasExpires = true }
            let lower = ASCII.lowercased(name)
            if lower.hasPrefix("x-amz-") {
                if lower.hasPrefix("x-amz-copy-source") || lower == "x-amz-acl" || lower.hasPrefix("x-amz-grant-") {
                    throw PolicyDenial(
                        .headerInQuery, rule: "hardening",
                        "'\(name)' is refused as a query parameter; send it as a header")
                }
                hasSigV4 = true
            }
        }
        if hasSigV2 || (hasExpires && !hasSigV4) {
            throw PolicyDenial(
                .legacyAuthentication, rule: "hardening",
                "SigV2 query authentication (AWSAccessKeyId, Signature, Expires) is refused; presignd signs requests")
        }
    }

    /// What the headers say that changes what a request does or needs.
    public struct HeaderFacts: Sendable, Equatable {
        /// `x-amz-acl` or an `x-amz-grant-*` header.
        public var setsACL = false
        public var hasCopySource = false
        public var hasCopySourceRange = false
        /// Actions headers need besides the operation's own: `x-amz-tagging` s3:PutObjectTagging, Object Lock's
        /// `x-amz-object-lock-mode` and `-retain-until-date` s3:PutObjectRetention, `x-amz-object-lock-legal-hold`
        /// s3:PutObjectLegalHold, `x-amz-bypass-governance-retention` s3:BypassGovernanceRetention, R2's
        /// `cf-create-bucket-if-missing` s3:CreateBucket.
        public var headerActions: [String] = []
    }

    /// Refuses method-override headers; reports the headers that change meaning or need more actions.
    public static func checkHeaders(_ headers: HTTPHeaders) throws(PolicyDenial) -> HeaderFacts {
        var facts = HeaderFacts()
        for (name, value) in headers {
            let first = name.utf8.first.map(ASCII.lowercased)
            if first == UInt8(ascii: "c") {
                // R2's `cf-create-bucket-if-missing: true` makes a PutObject or CreateMultipartUpload create the
                // bucket when it does not exist (R2 S3 extensions): that is a CreateBucket, judged as one.
                if ASCII.equalsLowercase(name.utf8, "cf-create-bucket-if-missing") {
                    facts.headerActions.append("s3:CreateBucket")
                }
                continue
            }
            guard first == UInt8(ascii: "x") else { continue }
            // Compared in place: most requests carry several long x-amz-* names, and a lower-cased copy of each
            // would allocate.
            let bytes = name.utf8
            if methodOverrideHeaders.contains(where: { ASCII.equalsIgnoringCase(name, $0) }) {
                throw PolicyDenial(.methodOverride, rule: "hardening", "the \(name) header is refused")
            }
            if ASCII.equalsLowercase(bytes, "x-amz-acl") {
                // `private` is the canned ACL every object gets anyway (owner only): it grants nobody anything,
                // and clients such as rclone send it on every upload. Any other canned ACL needs the ACL action.
                if !ASCII.equalsLowercase(value, "private") { facts.setsACL = true }
            } else if ASCII.equalsLowercase(bytes.prefix(12), "x-amz-grant-") {
                facts.setsACL = true
            } else if ASCII.equalsLowercase(bytes, "x-amz-copy-source") {
                facts.hasCopySource = true
            } else if ASCII.equalsLowercase(bytes, "x-amz-copy-source-range") {
                facts.hasCopySourceRange = true
            } else if ASCII.equalsLowercase(bytes, "x-amz-object-lock-mode")
                || ASCII.equalsLowercase(bytes, "x-amz-object-lock-retain-until-date")
            {
                facts.headerActions.append("s3:PutObjectRetention")
            } else if ASCII.equalsLowercase(bytes, "x-amz-object-lock-legal-hold") {
                facts.headerActions.append("s3:PutObjectLegalHold")
            } else if ASCII.equalsLowercase(bytes, "x-amz-tagging") {
                facts.headerActions.append("s3:PutObjectTagging")
            } else if ASCII.equalsLowercase(bytes, "x-amz-bypass-governance-retention") {
                facts.headerActions.append("s3:BypassGovernanceRetention")
            }
        }
        return facts
    }
}
