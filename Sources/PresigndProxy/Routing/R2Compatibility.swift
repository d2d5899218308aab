import PresigndHTTP1
import PresigndPolicy

/// What Cloudflare R2 does not implement of the S3 API (developers.cloudflare.com/r2/api/s3/api/, "S3 API
/// compatibility"), answered by presignd with `501 NotImplemented` for R2 upstreams only (issue 21 §5): a client
/// then learns at once that the feature is missing, instead of R2 ignoring what it asked for (tags, Object Lock
/// retention, a KMS key on an upload) or answering in a way its SDK does not expect.
enum R2Compatibility {
    /// Operations the page lists as not implemented (and presignd classifies).
    static let unimplementedOperations: Set<S3Operation> = [
        .getObjectTagging, .putObjectTagging, .deleteObjectTagging,
        .getBucketAcl, .putBucketAcl, .getBucketPolicy, .putBucketPolicy, .getBucketPolicyStatus,
        .getBucketVersioning, .putBucketVersioning, .getBucketWebsite, .putBucketWebsite, .getBucketTagging,
        .putBucketTagging, .getBucketLogging, .putBucketLogging, .getBucketNotificationConfiguration,
        .putBucketNotificationConfiguration, .getBucketReplication, .putBucketReplication,
        .getBucketRequestPayment, .putBucketRequestPayment, .getBucketAccelerateConfiguration,
        .putBucketAccelerateConfiguration, .getObjectLockConfiguration, .putObjectLockConfiguration,
        .getBucketOwnershipControls, .putBucketOwnershipControls, .getPublicAccessBlock, .putPublicAccessBlock,
        .putBucketEncryption,
    ]

    /// Operations that write an object, whose unimplemented headers R2 would otherwise ignore.
    private static let objectWrites: Set<S3Operation> = [.putObject, .copyObject, .createMultipartUpload]

    /// Why R2 cannot do what the request asks, or nil when it can.
    static func unsupported(_ operation: S3Operation, headers: HTTPHeaders) -> String? {
        if unimplementedOperations.contains(operation) {
            return "Cloudflare R2 does not implement \(operation.rawValue) (R2 S3 API compatibility)"
        }
        guard objectWrites.contains(operation) else { return nil }
        for (name, value) in headers where name.utf8.first.map(ASCII.lowercased) == UInt8(ascii: "x") {
            let lower = ASCII.lowercased(name)
            let ignored: Bool
            switch lower {
            case "x-amz-tagging", "x-amz-tagging-directive", "x-amz-website-redirect-location",
                "x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold",
                "x-amz-server-side-encryption-aws-kms-key-id", "x-amz-server-side-encryption-context":
                ignored = true
            case "x-amz-server-side-encryption":
                // R2 encrypts every object at rest (AES-256): only a request for KMS asks for what R2 lacks.
                ignored = !ASCII.equalsLowercase(value, "aes256")
            default:
                ignored = false
            }
            if ignored {
                return "Cloudflare R2 does not implement the \(lower) header of \(operation.rawValue) "
                    + "(R2 S3 API compatibility); it would be ignored"
            }
        }
        return nil
    }
}
