import PresigndConfig
import PresigndHTTP1

/// Which requests may be answered from the cache and which upstream answers may be stored (issue 23 §4). Pure:
/// the connection asks after the policy has allowed the request, and before it opens anything.
public enum Cacheability {
    /// Why a request or an answer stays out of the cache (for debug logs and tests).
    public enum Reason: String, Sendable, Equatable {
        case method, queryParameter, customerKey, clientNoStore, multipleRanges, excludedKey
        case status, noStore, isPrivate, vary, noETag, tooLarge, setCookie, noLength
    }

    public enum RequestVerdict: Sendable, Equatable {
        /// Look the object up; `forcesRevalidation` for `Cache-Control: no-cache` (or `Pragma: no-cache`).
        case lookUp(forcesRevalidation: Bool)
        /// Send the request upstream as if there were no cache.
        case bypass(Reason)
    }

    public enum ResponseVerdict: Sendable, Equatable {
        case store(StoredResponse)
        /// A 404 remembered for `negative_ttl`.
        case rememberMissing
        case doNotStore(Reason)
    }

    /// Query parameters a cached GET may carry: `versionId` is part of the identity. Anything else (`partNumber`,
    /// `response-content-type` and the other header overrides, sub-resources) changes the answer: bypass.
    static let cacheableQueryNames: Set<String> = ["versionId"]

    /// A GET or HEAD for `key`, with the query parameter names it carries.
    public static func request(
        method: String, queryNames: [String], headers: HTTPHeaders, key: String, config: CacheConfig
    ) -> RequestVerdict {
        guard method == "GET" || method == "HEAD" else { return .bypass(.method) }
        guard queryNames.allSatisfy(cacheableQueryNames.contains) else { return .bypass(.queryParameter) }
        // SSE-C: the object can only be read with the client's key, which the cache would not check.
        for (name, _) in headers where ASCII.hasLowercasePrefix(name, "x-amz-server-side-encryption-customer-") {
            return .bypass(.customerKey)
        }
        let directives = cacheControl(headers)
        if directives.contains("no-store") { return .bypass(.clientNoStore) }
        if case .multiple = ClientRange.parse(headers["Range"], objectSize: Int.max) { return .bypass(.multipleRanges) }
        guard config.includes(key: key) else { return .bypass(.excludedKey) }
        let pragma = headers["Pragma"].map { ASCII.lowercased($0).contains("no-cache") } ?? false
        return .lookUp(forcesRevalidation: directives.contains("no-cache") || pragma)
    }

    /// An upstream answer to a cacheable GET (a 200, a 206 for an aligned slice range, or an error).
    public static func response(_ head: ResponseHead, config: CacheConfig) -> ResponseVerdict {
        switch head.status {
        case 200, 206: break
        case 404: return config.negativeTTL.milliseconds > 0 ? .rememberMissing : .doNotStore(.status)
        default: return .doNotStore(.status)
        }
        let directives = cacheControl(head.headers)
        if directives.contains("no-store") { return .doNotStore(.noStore) }
        if directives.contains("private") { return .doNotStore(.isPrivate) }
        // The cache keys on the URL alone: any Vary (S3 sends one for CORS) names fields it cannot key on.
        if head.headers.values("Vary").contains(where: { !$0.allSatisfy { $0 == " " || $0 == "\t" } }) {
            return .doNotStore(.vary)
        }
        if head.headers.contains(name: "Set-Cookie") { return .doNotStore(.setCookie) }
        if head.headers.contains(name: "x-amz-server-side-encryption-customer-algorithm") {
            return .doNotStore(.customerKey)
        }
        guard let stored = StoredResponse(upstream: head) else { return .doNotStore(.noLength) }
        guard stored.version != nil else { return .doNotStore(.noETag) }
        guard stored.objectSize <= config.largestObject else { return .doNotStore(.tooLarge) }
        return .store(stored)
    }

    /// How long a stored object is served without asking: `revalidate_after`, or 0 when the object says
    /// `Cache-Control: no-cache` (its owner asked for every use to be checked).
    public static func revalidateAfter(_ stored: StoredResponse, config: CacheConfig) -> ConfigDuration {
        cacheControl(stored.headers).contains("no-cache") ? .seconds(0) : config.revalidateAfter
    }

    /// The `Cache-Control` directive names, lower-cased, arguments dropped.
    static func cacheControl(_ headers: HTTPHeaders) -> Set<String> {
        var names: Set<String> = []
        for value in headers.values("Cache-Control") {
            for directive in value.split(separator: ",") {
                let name = directive.split(separator: "=", maxSplits: 1).first ?? ""
                names.insert(ASCII.lowercased(String(name.trimmingCharacters(" \t"))))
            }
        }
        return names
    }
}
