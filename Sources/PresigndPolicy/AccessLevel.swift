/// A bucket's `access` as a set of IAM actions. Bucket configuration (policy, ACL, lifecycle, CORS, website,
/// versioning, encryption, replication, tagging, …), creating or deleting the bucket, object ACLs, retention and
/// legal holds are in neither level: they are granted only by naming them in `allowed_actions`.
public enum AccessLevel: String, Sendable, Hashable, CaseIterable {
    /// Object reads, heads and listings.
    case readOnly = "read-only"
    /// Those, plus object writes, deletes, copies into the bucket and multipart uploads.
    case readWrite = "read-write"

    /// Lists, not sets: a request looks its one action up, and comparing a few strings (the most frequent first)
    /// costs less than hashing one.
    public static let readActions: [String] = [
        "s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectTagging", "s3:GetObjectVersionTagging",
        "s3:GetObjectAttributes", "s3:GetObjectVersionAttributes", "s3:ListBucket", "s3:ListBucketVersions",
        "s3:ListBucketMultipartUploads", "s3:ListMultipartUploadParts", "s3:GetBucketLocation",
    ]

    public static let writeActions: [String] = [
        "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:AbortMultipartUpload",
        "s3:PutObjectTagging", "s3:PutObjectVersionTagging", "s3:DeleteObjectTagging",
        "s3:DeleteObjectVersionTagging",
    ]

    /// The rule as `presignd explain` and the log name it, made once (the engine returns it per request).
    public var rule: String { self == .readOnly ? Self.readOnlyRule : Self.readWriteRule }
    static let readOnlyRule = "access = \"read-only\""
    static let readWriteRule = "access = \"read-write\""

    /// Whether the level grants `action`.
    public func grants(_ action: String) -> Bool {
        Self.readActions.contains(action) || (self == .readWrite && Self.writeActions.contains(action))
    }
}
