import PresigndPolicy

/// One `[[bucket]]`: an upstream bucket exposed under a path prefix, with its access policy.
///
/// Routing: a request goes to the bucket whose `mount` is the longest matching path-segment prefix. A bucket
/// mounted at `/` is the catch-all (fixed-bucket mode: `/cat.jpg` is object `cat.jpg`) and may coexist with others.
public struct BucketConfig: Sendable, Hashable {
    /// `access`.
    public enum Access: String, Sendable, Hashable, CaseIterable {
        /// GET and HEAD (objects and listings). The default: the safe choice.
        case readOnly = "read-only"
        /// Everything, including PUT, POST (multipart, batch delete) and DELETE.
        case readWrite = "read-write"
    }

    /// `name`: the bucket's name at the upstream (required, unique).
    public var name: String
    /// `upstream`: `NAME` of an `[upstream.NAME]`; may be omitted when exactly one upstream is defined.
    public var upstream: String
    /// `mount`: path prefix, default `"/" + name`; `"/"` for a fixed bucket. No trailing slash.
    public var mount: String
    /// `access`. Default read-only.
    public var access: Access = .readOnly
    /// `allowed_prefixes`: object key prefixes requests may touch; empty (default) allows every key.
    public var allowedPrefixes: [String] = []
    /// `allowed_methods`: upper-case HTTP methods; empty (default) allows every method `access` permits. Kept as
    /// an alias over operations: an operation passes when its method is listed (DeleteObjects counts as DELETE).
    public var allowedMethods: [String] = []
    /// `allowed_actions`: IAM actions granted beyond `access` (`s3:PutBucketPolicy`, `s3:Get*`); default none.
    public var allowedActions: [ActionPattern] = []
    /// `denied_actions`: IAM actions refused even when granted; default none.
    public var deniedActions: [ActionPattern] = []
    /// `allow`: who may use the bucket (`uid:1000`, `gid:media`, `cidr:10.0.0.0/8`, `unix:any`, `tcp:any`,
    /// `token:NAME`); empty (default) means whoever can connect.
    public var allow: [PrincipalPattern] = []
    /// `max_upload_size`: largest request body accepted; nil (default) leaves the limit to the upstream.
    public var maxUploadSize: Int? = nil
    /// `redirect`: answer GET/HEAD with a 307 to a presigned upstream URL instead of proxying. Default false.
    public var redirect: Bool = false
    /// `redirect_expires`: lifetime of those presigned URLs. Default 5 minutes.
    public var redirectExpires: ConfigDuration = .minutes(5)
    /// `max_presign_expiry`: longest expiry the presign API grants for this bucket. Default and maximum 7 days.
    public var maxPresignExpiry: ConfigDuration = .days(7)
    /// `plus_in_path_is_space`: treat `+` in request paths as a space (some old clients). Default false.
    public var plusInPathIsSpace: Bool = false
    /// `[bucket.cache]`: the local read cache (issue 23); nil (default) sends every GET upstream.
    public var cache: CacheConfig? = nil

    public init(name: String, upstream: String, mount: String? = nil) {
        self.name = name
        self.upstream = upstream
        self.mount = mount ?? "/" + name
    }

    /// Methods `access` permits, before `allowedMethods` narrows them.
    public var permittedMethods: [String] {
        access == .readOnly ? ["GET", "HEAD"] : ["GET", "HEAD", "PUT", "POST", "DELETE"]
    }
}
