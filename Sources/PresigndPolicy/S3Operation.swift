/// One S3 API operation, named as the S3 API reference names it. The IAM action each one needs is in
/// `OperationTable` (AWS Service Authorization Reference, "Actions, resources, and condition keys for Amazon S3").
public enum S3Operation: String, CaseIterable, Sendable, Hashable {
    // Objects.
    case getObject = "GetObject"
    case headObject = "HeadObject"
    case putObject = "PutObject"
    case copyObject = "CopyObject"
    case deleteObject = "DeleteObject"
    case getObjectTagging = "GetObjectTagging"
    case putObjectTagging = "PutObjectTagging"
    case deleteObjectTagging = "DeleteObjectTagging"
    case getObjectAcl = "GetObjectAcl"
    case putObjectAcl = "PutObjectAcl"
    case getObjectAttributes = "GetObjectAttributes"
    case getObjectRetention = "GetObjectRetention"
    case putObjectRetention = "PutObjectRetention"
    case getObjectLegalHold = "GetObjectLegalHold"
    case putObjectLegalHold = "PutObjectLegalHold"
    case getObjectTorrent = "GetObjectTorrent"
    case restoreObject = "RestoreObject"
    case selectObjectContent = "SelectObjectContent"
    // Multipart uploads.
    case createMultipartUpload = "CreateMultipartUpload"
    case uploadPart = "UploadPart"
    case uploadPartCopy = "UploadPartCopy"
    case completeMultipartUpload = "CompleteMultipartUpload"
    case abortMultipartUpload = "AbortMultipartUpload"
    case listParts = "ListParts"
    // Listings and bucket-level reads of keys.
    case listObjects = "ListObjects"
    case listObjectsV2 = "ListObjectsV2"
    case listObjectVersions = "ListObjectVersions"
    case listMultipartUploads = "ListMultipartUploads"
    case headBucket = "HeadBucket"
    case getBucketLocation = "GetBucketLocation"
    case deleteObjects = "DeleteObjects"
    // Bucket administration.
    case createBucket = "CreateBucket"
    case deleteBucket = "DeleteBucket"
    case getBucketPolicy = "GetBucketPolicy"
    case putBucketPolicy = "PutBucketPolicy"
    case deleteBucketPolicy = "DeleteBucketPolicy"
    case getBucketPolicyStatus = "GetBucketPolicyStatus"
    case getBucketAcl = "GetBucketAcl"
    case putBucketAcl = "PutBucketAcl"
    case getBucketLifecycleConfiguration = "GetBucketLifecycleConfiguration"
    case putBucketLifecycleConfiguration = "PutBucketLifecycleConfiguration"
    case deleteBucketLifecycle = "DeleteBucketLifecycle"
    case getBucketCors = "GetBucketCors"
    case putBucketCors = "PutBucketCors"
    case deleteBucketCors = "DeleteBucketCors"
    case getBucketWebsite = "GetBucketWebsite"
    case putBucketWebsite = "PutBucketWebsite"
    case deleteBucketWebsite = "DeleteBucketWebsite"
    case getBucketVersioning = "GetBucketVersioning"
    case putBucketVersioning = "PutBucketVersioning"
    case getBucketEncryption = "GetBucketEncryption"
    case putBucketEncryption = "PutBucketEncryption"
    case deleteBucketEncryption = "DeleteBucketEncryption"
    case getBucketReplication = "GetBucketReplication"
    case putBucketReplication = "PutBucketReplication"
    case deleteBucketReplication = "DeleteBucketReplication"
    case getBucketTagging = "GetBucketTagging"
    case putBucketTagging = "PutBucketTagging"
    case deleteBucketTagging = "DeleteBucketTagging"
    case getBucketLogging = "GetBucketLogging"
    case putBucketLogging = "PutBucketLogging"
    case getBucketNotificationConfiguration = "GetBucketNotificationConfiguration"
    case putBucketNotificationConfiguration = "PutBucketNotificationConfiguration"
    case getBucketRequestPayment = "GetBucketRequestPayment"
    case putBucketRequestPayment = "PutBucketRequestPayment"
    case getBucketAccelerateConfiguration = "GetBucketAccelerateConfiguration"
    case putBucketAccelerateConfiguration = "PutBucketAccelerateConfiguration"
    case getObjectLockConfiguration = "GetObjectLockConfiguration"
    case putObjectLockConfiguration = "PutObjectLockConfiguration"
    case getBucketOwnershipControls = "GetBucketOwnershipControls"
    case putBucketOwnershipControls = "PutBucketOwnershipControls"
    case deleteBucketOwnershipControls = "DeleteBucketOwnershipControls"
    case getPublicAccessBlock = "GetPublicAccessBlock"
    case putPublicAccessBlock = "PutPublicAccessBlock"
    case deletePublicAccessBlock = "DeletePublicAccessBlock"

    /// Listings: their `prefix` is what they touch, and it must stay inside `allowed_prefixes`.
    public var isListing: Bool {
        self == .listObjects || self == .listObjectsV2 || self == .listObjectVersions || self == .listMultipartUploads
    }

    /// Operations with a copy source (`x-amz-copy-source`): the source is read with presignd's keys.
    public var copiesFromSource: Bool { self == .copyObject || self == .uploadPartCopy }

    /// Operations S3 may answer `200 OK` and then fail in the body: the status goes out before the work is done
    /// (a copy, the assembly of parts), whitespace keeps the connection alive meanwhile, and the outcome is the
    /// body's root element, `<Error>` or the result (S3 API reference: CompleteMultipartUpload, CopyObject,
    /// UploadPartCopy).
    public var mayFailAfterSuccessStatus: Bool {
        self == .completeMultipartUpload || self == .copyObject || self == .uploadPartCopy
    }

    /// The method `allowed_methods` judges the operation by: its HTTP method, except that DeleteObjects
    /// (`POST ?delete`) deletes and counts as DELETE (issue 19: `allowed_methods` without DELETE must stop it).
    public func aliasMethod(httpMethod: String) -> String { self == .deleteObjects ? "DELETE" : httpMethod }
}
