/// The classifier's table: which method, on a bucket or an object, with which subresource and whether a copy
/// source is given, is which S3 operation, and the IAM action it needs (AWS Service Authorization Reference,
/// "Actions, resources, and condition keys for Amazon S3"; "Amazon S3 API Reference" for the request forms).
public struct OperationRow: Sendable {
    /// Whether the path names a bucket (`/bucket`) or an object (`/bucket/key`).
    public enum Scope: Sendable { case bucket, object }

    public var method: String
    public var scope: Scope
    /// The one subresource query parameter the form carries (`acl`, `uploads`, `uploadId`, …), or nil.
    public var subresource: String?
    /// Whether `x-amz-copy-source` is present.
    public var copiesSource: Bool
    public var operation: S3Operation
    public var action: String
    /// The action when the request names a `versionId` (`s3:GetObjectVersion` for GetObject), when it differs.
    public var versionedAction: String?

    init(
        _ method: String, _ scope: Scope, _ subresource: String?, _ operation: S3Operation, _ action: String,
        versioned: String? = nil, copiesSource: Bool = false
    ) {
        self.method = method
        self.scope = scope
        self.subresource = subresource
        self.copiesSource = copiesSource
        self.operation = operation
        self.action = action
        self.versionedAction = versioned
    }
}

/// Every request form presignd recognises. Anything else is denied (deny by default).
public enum OperationTable {
    public static let rows: [OperationRow] = objectRows + bucketRows + bucketConfigurationRows

    static let objectRows: [OperationRow] = [
        .init("GET", .object, nil, .getObject, "s3:GetObject", versioned: "s3:GetObjectVersion"),
        .init("HEAD", .object, nil, .headObject, "s3:GetObject", versioned: "s3:GetObjectVersion"),
        .init("PUT", .object, nil, .putObject, "s3:PutObject"),
        .init("PUT", .object, nil, .copyObject, "s3:PutObject", copiesSource: true),
        .init("DELETE", .object, nil, .deleteObject, "s3:DeleteObject", versioned: "s3:DeleteObjectVersion"),
        .init(
            "GET", .object, "tagging", .getObjectTagging, "s3:GetObjectTagging", versioned: "s3:GetObjectVersionTagging"
        ),
        .init(
            "PUT", .object, "tagging", .putObjectTagging, "s3:PutObjectTagging", versioned: "s3:PutObjectVersionTagging"
        ),
        .init(
            "DELETE", .object, "tagging", .deleteObjectTagging, "s3:DeleteObjectTagging",
            versioned: "s3:DeleteObjectVersionTagging"),
        .init("GET", .object, "acl", .getObjectAcl, "s3:GetObjectAcl", versioned: "s3:GetObjectVersionAcl"),
        .init("PUT", .object, "acl", .putObjectAcl, "s3:PutObjectAcl", versioned: "s3:PutObjectVersionAcl"),
        .init(
            "GET", .object, "attributes", .getObjectAttributes, "s3:GetObjectAttributes",
            versioned: "s3:GetObjectVersionAttributes"),
        .init("GET", .object, "retention", .getObjectRetention, "s3:GetObjectRetention"),
        .init("PUT", .object, "retention", .putObjectRetention, "s3:PutObjectRetention"),
        .init("GET", .object, "legal-hold", .getObjectLegalHold, "s3:GetObjectLegalHold"),
        .init("PUT", .object, "legal-hold", .putObjectLegalHold, "s3:PutObjectLegalHold"),
        .init(
            "GET", .object, "torrent", .getObjectTorrent, "s3:GetObjectTorrent", versioned: "s3:GetObjectVersionTorrent"
        ),
        .init("POST", .object, "restore", .restoreObject, "s3:RestoreObject"),
        .init("POST", .object, "select", .selectObjectContent, "s3:GetObject"),
        // Multipart: CreateMultipartUpload, UploadPart(Copy) and CompleteMultipartUpload authorize as s3:PutObject.
        .init("POST", .object, "uploads", .createMultipartUpload, "s3:PutObject"),
        .init("PUT", .object, "uploadId", .uploadPart, "s3:PutObject"),
        .init("PUT", .object, "uploadId", .uploadPartCopy, "s3:PutObject", copiesSource: true),
        .init("POST", .object, "uploadId", .completeMultipartUpload, "s3:PutObject"),
        .init("DELETE", .object, "uploadId", .abortMultipartUpload, "s3:AbortMultipartUpload"),
        .init("GET", .object, "uploadId", .listParts, "s3:ListMultipartUploadParts"),
    ]

    static let bucketRows: [OperationRow] = [
        // ListObjectsV2 is ListObjects with `list-type=2` (OperationClassifier tells them apart).
        .init("GET", .bucket, nil, .listObjects, "s3:ListBucket"),
        .init("HEAD", .bucket, nil, .headBucket, "s3:ListBucket"),
        .init("GET", .bucket, "versions", .listObjectVersions, "s3:ListBucketVersions"),
        .init("GET", .bucket, "uploads", .listMultipartUploads, "s3:ListBucketMultipartUploads"),
        .init("GET", .bucket, "location", .getBucketLocation, "s3:GetBucketLocation"),
        .init("POST", .bucket, "delete", .deleteObjects, "s3:DeleteObject"),
        .init("PUT", .bucket, nil, .createBucket, "s3:CreateBucket"),
        .init("DELETE", .bucket, nil, .deleteBucket, "s3:DeleteBucket"),
    ]

    static let bucketConfigurationRows: [OperationRow] = [
        .init("GET", .bucket, "policy", .getBucketPolicy, "s3:GetBucketPolicy"),
        .init("PUT", .bucket, "policy", .putBucketPolicy, "s3:PutBucketPolicy"),
        .init("DELETE", .bucket, "policy", .deleteBucketPolicy, "s3:DeleteBucketPolicy"),
        .init("GET", .bucket, "policyStatus", .getBucketPolicyStatus, "s3:GetBucketPolicyStatus"),
        .init("GET", .bucket, "acl", .getBucketAcl, "s3:GetBucketAcl"),
        .init("PUT", .bucket, "acl", .putBucketAcl, "s3:PutBucketAcl"),
        .init("GET", .bucket, "lifecycle", .getBucketLifecycleConfiguration, "s3:GetLifecycleConfiguration"),
        .init("PUT", .bucket, "lifecycle", .putBucketLifecycleConfiguration, "s3:PutLifecycleConfiguration"),
        .init("DELETE", .bucket, "lifecycle", .deleteBucketLifecycle, "s3:PutLifecycleConfiguration"),
        .init("GET", .bucket, "cors", .getBucketCors, "s3:GetBucketCORS"),
        .init("PUT", .bucket, "cors", .putBucketCors, "s3:PutBucketCORS"),
        .init("DELETE", .bucket, "cors", .deleteBucketCors, "s3:PutBucketCORS"),
        .init("GET", .bucket, "website", .getBucketWebsite, "s3:GetBucketWebsite"),
        .init("PUT", .bucket, "website", .putBucketWebsite, "s3:PutBucketWebsite"),
        .init("DELETE", .bucket, "website", .deleteBucketWebsite, "s3:DeleteBucketWebsite"),
        .init("GET", .bucket, "versioning", .getBucketVersioning, "s3:GetBucketVersioning"),
        .init("PUT", .bucket, "versioning", .putBucketVersioning, "s3:PutBucketVersioning"),
        .init("GET", .bucket, "encryption", .getBucketEncryption, "s3:GetEncryptionConfiguration"),
        .init("PUT", .bucket, "encryption", .putBucketEncryption, "s3:PutEncryptionConfiguration"),
        .init("DELETE", .bucket, "encryption", .deleteBucketEncryption, "s3:PutEncryptionConfiguration"),
        .init("GET", .bucket, "replication", .getBucketReplication, "s3:GetReplicationConfiguration"),
        .init("PUT", .bucket, "replication", .putBucketReplication, "s3:PutReplicationConfiguration"),
        .init("DELETE", .bucket, "replication", .deleteBucketReplication, "s3:PutReplicationConfiguration"),
        .init("GET", .bucket, "tagging", .getBucketTagging, "s3:GetBucketTagging"),
        .init("PUT", .bucket, "tagging", .putBucketTagging, "s3:PutBucketTagging"),
        .init("DELETE", .bucket, "tagging", .deleteBucketTagging, "s3:PutBucketTagging"),
        .init("GET", .bucket, "logging", .getBucketLogging, "s3:GetBucketLogging"),
        .init("PUT", .bucket, "logging", .putBucketLogging, "s3:PutBucketLogging"),
        .init("GET", .bucket, "notification", .getBucketNotificationConfiguration, "s3:GetBucketNotification"),
        .init("PUT", .bucket, "notification", .putBucketNotificationConfiguration, "s3:PutBucketNotification"),
        .init("GET", .bucket, "requestPayment", .getBucketRequestPayment, "s3:GetBucketRequestPayment"),
        .init("PUT", .bucket, "requestPayment", .putBucketRequestPayment, "s3:PutBucketRequestPayment"),
        .init("GET", .bucket, "accelerate", .getBucketAccelerateConfiguration, "s3:GetAccelerateConfiguration"),
        .init("PUT", .bucket, "accelerate", .putBucketAccelerateConfiguration, "s3:PutAccelerateConfiguration"),
        .init("GET", .bucket, "object-lock", .getObjectLockConfiguration, "s3:GetBucketObjectLockConfiguration"),
        .init("PUT", .bucket, "object-lock", .putObjectLockConfiguration, "s3:PutBucketObjectLockConfiguration"),
        .init("GET", .bucket, "ownershipControls", .getBucketOwnershipControls, "s3:GetBucketOwnershipControls"),
        .init("PUT", .bucket, "ownershipControls", .putBucketOwnershipControls, "s3:PutBucketOwnershipControls"),
        .init(
            "DELETE", .bucket, "ownershipControls", .deleteBucketOwnershipControls, "s3:PutBucketOwnershipControls"),
        .init("GET", .bucket, "publicAccessBlock", .getPublicAccessBlock, "s3:GetBucketPublicAccessBlock"),
        .init("PUT", .bucket, "publicAccessBlock", .putPublicAccessBlock, "s3:PutBucketPublicAccessBlock"),
        .init("DELETE", .bucket, "publicAccessBlock", .deletePublicAccessBlock, "s3:PutBucketPublicAccessBlock"),
    ]

    /// Query parameters that name a subresource: each changes what a request does.
    public static let subresources: Set<String> = Set(rows.compactMap(\.subresource))

    /// Query parameters that refine an operation without changing which one it is. Any other parameter is an
    /// unknown subresource, and the request is denied.
    public static let plainParameters: Set<String> = [
        "versionId", "partNumber", "x-id", "response-content-type", "response-content-language", "response-expires",
        "response-cache-control", "response-content-disposition", "response-content-encoding",
        // Listings.
        "prefix", "delimiter", "marker", "max-keys", "encoding-type", "list-type", "continuation-token",
        "fetch-owner", "start-after", "key-marker", "version-id-marker", "upload-id-marker", "max-uploads",
        // ListParts, SelectObjectContent.
        "max-parts", "part-number-marker", "select-type",
    ]

    /// Actions no operation is named after but requests can need (AWS: "permission-only"): the Object Lock
    /// bypass header's.
    public static let permissionOnlyActions: Set<String> = ["s3:BypassGovernanceRetention"]

    /// Every IAM action some request needs: what `allowed_actions` / `denied_actions` patterns match against.
    public static let actions: Set<String> = Set(rows.map(\.action) + rows.compactMap(\.versionedAction))
        .union(permissionOnlyActions)
}
