import PresigndHTTP1

/// What the cache keeps of an upstream GET answer, to replay it: the whole object's size and the header fields
/// that describe the object rather than the exchange (issue 23 §3).
public struct StoredResponse: Sendable, Equatable {
    /// The whole object's length (from `Content-Length` of a 200, or the `/size` of a 206's `Content-Range`).
    public var objectSize: Int
    /// The replayable fields, in the order the upstream sent them.
    public var headers: HTTPHeaders

    public init(objectSize: Int, headers: HTTPHeaders) {
        self.objectSize = objectSize
        self.headers = headers
    }

    /// Fields kept by name. Not kept: the exchange's own (`Date`, `Server`, `x-amz-request-id`, `x-amz-id-2`,
    /// framing, `Content-Range`, `Accept-Ranges`, which the cache writes itself), what depends on the request
    /// (`Vary`, CORS `Access-Control-*`, checksums sent only with `x-amz-checksum-mode`, `x-amz-mp-parts-count`
    /// for `partNumber`), and what changes while the object does not (`x-amz-restore`, `x-amz-replication-status`,
    /// `x-amz-expiration`).
    static let keptNames: [StaticString] = [
        "content-type", "content-encoding", "content-language", "content-disposition", "cache-control", "expires",
        "etag", "last-modified", "x-amz-version-id", "x-amz-server-side-encryption",
        "x-amz-server-side-encryption-aws-kms-key-id", "x-amz-server-side-encryption-bucket-key-enabled",
        "x-amz-storage-class", "x-amz-tagging-count", "x-amz-website-redirect-location", "x-amz-object-lock-mode",
        "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold", "x-amz-missing-meta",
    ]

    /// Whether a response field is replayed from the cache: a kept name, or user metadata (`x-amz-meta-*`).
    /// Compared in place, ignoring case (a length check rejects most names): no lower-cased copy per field.
    public static func isReplayable(_ name: String) -> Bool {
        for kept in keptNames where ASCII.equalsLowercase(name, kept) { return true }
        let prefix = "x-amz-meta-".utf8
        return name.utf8.count >= prefix.count
            && ASCII.equalsLowercase(name.utf8.prefix(prefix.count), "x-amz-meta-")
    }

    /// The stored form of a 200 or 206 answer; nil without a usable length.
    public init?(upstream head: ResponseHead) {
        let size: Int?
        switch head.status {
        case 200: size = head.headers["Content-Length"].flatMap(ContentRange.parseLength)
        case 206: size = head.headers["Content-Range"].flatMap(ContentRange.parseCompleteLength)
        default: size = nil
        }
        guard let size else { return nil }
        var kept = HTTPHeaders()
        for (name, value) in head.headers where Self.isReplayable(name) { kept.add(name: name, value: value) }
        self.init(objectSize: size, headers: kept)
    }

    /// The object's version as the stored fields name it; nil without an `ETag`.
    public var version: ObjectVersion? {
        headers["ETag"].map { ObjectVersion(etag: $0, versionID: headers["x-amz-version-id"]) }
    }

    /// `Last-Modified`, as seconds since the epoch, when it is a valid HTTP-date.
    public var lastModified: Int? { headers["Last-Modified"].flatMap(HTTPDate.parse) }
}
