import PresigndHTTP1

/// The client's preconditions against a fresh stored object (RFC 9110 §13.2.2), answered without the upstream.
///
/// Only for a stored object that is fresh (`Freshness`): a stale one is revalidated first, and its preconditions
/// are evaluated after, against what the revalidation confirmed.
public enum ConditionalRequest {
    public enum Outcome: Sendable, Equatable {
        /// Serve the object; `honoursRange` is false when `If-Range` did not match (the whole object, 200).
        case proceed(honoursRange: Bool)
        /// 304 Not Modified, with `notModifiedHeaders`.
        case notModified
        /// 412 Precondition Failed.
        case preconditionFailed
    }

    /// Evaluates `If-Match`, `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since` and `If-Range`, in the
    /// order §13.2.2 gives. Dates that are not IMF-fixdate are ignored, as invalid dates must be.
    public static func evaluate(_ headers: HTTPHeaders, method: String, stored: StoredResponse) -> Outcome {
        let etag = stored.headers["ETag"]
        // Parsed only for a date condition: most requests carry none.
        var lastModified: Int? { stored.lastModified }
        let isRead = method == "GET" || method == "HEAD"
        if let field = headers["If-Match"] {
            guard matches(field, etag: etag, weak: false) else { return .preconditionFailed }  // step 1
        } else if let date = headers["If-Unmodified-Since"].flatMap(HTTPDate.parse), let lastModified,
            lastModified > date
        {
            return .preconditionFailed  // step 2
        }
        if let field = headers["If-None-Match"] {
            if matches(field, etag: etag, weak: true) { return isRead ? .notModified : .preconditionFailed }  // step 3
        } else if isRead, let date = headers["If-Modified-Since"].flatMap(HTTPDate.parse), let lastModified,
            lastModified <= date
        {
            return .notModified  // step 4
        }
        guard method == "GET", headers.contains(name: "Range"), let field = headers["If-Range"] else {
            return .proceed(honoursRange: true)
        }
        // Step 5: an entity tag must match strongly; a date must equal Last-Modified exactly (§13.1.5).
        if field.hasPrefix("\"") || field.hasPrefix("W/") {
            return .proceed(honoursRange: matches(field, etag: etag, weak: false))
        }
        return .proceed(honoursRange: lastModified != nil && HTTPDate.parse(field) == lastModified)
    }

    /// The stored fields a 304 repeats (RFC 9110 §15.4.5).
    public static func notModifiedHeaders(_ stored: StoredResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for name in ["ETag", "Last-Modified", "Cache-Control", "Expires"] {
            if let value = stored.headers[name] { headers.add(name: name, value: value) }
        }
        return headers
    }

    /// Whether an `If-Match`/`If-None-Match`/`If-Range` list names `etag` (`*` names any); weak or strong
    /// comparison (§8.8.3.2).
    static func matches(_ field: String, etag: String?, weak: Bool) -> Bool {
        guard let etag else { return false }
        for element in field.split(separator: ",") {
            let tag = element.trimmingCharacters(" \t")
            if tag == "*" { return true }
            if weak {
                if tag.droppingWeakPrefix == Substring(etag).droppingWeakPrefix { return true }
            } else if !tag.hasPrefix("W/") && !etag.hasPrefix("W/") && tag == etag {
                return true
            }
        }
        return false
    }
}

extension Substring {
    fileprivate var droppingWeakPrefix: Substring { hasPrefix("W/") ? dropFirst(2) : self }
}
