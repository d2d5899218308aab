/// Which object a cache entry holds: where it lives (`ObjectName`) and which version of it (`ObjectVersion`).
///
/// Slices are only ever served for the identity they were stored under: a changed ETag or version id is another
/// object, whose slices start empty (issue 23 §2, §4).
public struct ObjectIdentity: Sendable, Hashable {
    public var name: ObjectName
    public var version: ObjectVersion

    public init(name: ObjectName, version: ObjectVersion) {
        self.name = name
        self.version = version
    }
}

/// Upstream, bucket and key: the part of an identity that stays the same when the object is overwritten.
///
/// `upstream` names the storage, not the mount: the caller passes the upstream's name and endpoint (with the
/// account, for R2), so two mounts can only share entries when they read the same bucket of the same storage,
/// and an endpoint changed by a reload does not find the old account's objects.
public struct ObjectName: Sendable, Hashable {
    public var upstream: String
    public var bucket: String
    public var key: String

    public init(upstream: String, bucket: String, key: String) {
        self.upstream = upstream
        self.bucket = bucket
        self.key = key
    }

    /// The fields, each length-prefixed, so that no two names encode alike (`a/b` + `c` is not `a` + `b/c`).
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(upstream.utf8.count + bucket.utf8.count + key.utf8.count + 24)
        for field in [upstream, bucket, key] {
            bytes += String(field.utf8.count).utf8
            bytes.append(UInt8(ascii: ":"))
            bytes += field.utf8
        }
        return bytes
    }
}

/// The version of an object as S3 names it: its `ETag` (quotes included, as sent) and `x-amz-version-id`.
public struct ObjectVersion: Sendable, Hashable {
    public var etag: String
    public var versionID: String?

    public init(etag: String, versionID: String? = nil) {
        self.etag = etag
        self.versionID = versionID
    }

    /// A short tag for slice file names: slices of another version never share a name (`CacheKey.versionTag`).
    var encoded: [UInt8] { Array((etag + "\n" + (versionID ?? "")).utf8) }
}
