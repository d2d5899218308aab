import PresigndConfig
import PresigndHTTP1

/// When a stored object may be served without asking upstream, and what a revalidation answer means
/// (issue 23 §4). Times are wall-clock milliseconds (they outlive the process, in the entry's metadata).
public enum Freshness {
    /// Whether an object validated at `validatedAt` must be revalidated before it is served at `now`.
    /// `revalidate_after = 0` revalidates every use; a clock that went backwards revalidates too.
    public static func isRevalidationDue(validatedAt: Int, now: Int, revalidateAfter: ConfigDuration) -> Bool {
        guard revalidateAfter.milliseconds > 0, now >= validatedAt else { return true }
        return now - validatedAt >= revalidateAfter.milliseconds
    }

    /// The request fields of a revalidation: `If-None-Match` with the stored ETag (S3 answers 304 when unchanged).
    public static func revalidationHeaders(_ stored: StoredResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let etag = stored.headers["ETag"] { headers.add(name: "If-None-Match", value: etag) }
        return headers
    }

    /// What an upstream answer to a revalidation (or to a slice fetch) says about the stored object.
    public enum Revalidation: Sendable, Equatable {
        /// 304, or the same version: serve the slices, `validatedAt` is now.
        case unchanged
        /// Another version: drop every old slice (`SliceStore.replace`), never mix them with the new ones.
        case replaced(StoredResponse)
        /// 404: the object is gone; drop it (and remember the 404 for `negative_ttl` when set).
        case gone
        /// Anything else (5xx, 403, no ETag): nothing is known; pass the answer through uncached, serve no slice.
        case unknown
    }

    public static func revalidation(_ head: ResponseHead, stored: StoredResponse) -> Revalidation {
        switch head.status {
        case 304:
            return .unchanged
        case 404:
            return .gone
        case 200, 206:
            guard let fresh = StoredResponse(upstream: head), let version = fresh.version else { return .unknown }
            return version == stored.version && fresh.objectSize == stored.objectSize ? .unchanged : .replaced(fresh)
        default:
            return .unknown
        }
    }
}
