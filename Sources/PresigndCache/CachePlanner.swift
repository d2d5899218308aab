import PresigndConfig
import PresigndHTTP1

/// What the connection does with a cacheable GET or HEAD the policy allowed (issue 23 §3, §4): one pure decision
/// over the request, what the store holds and the time. The connection carries it out and, after a revalidation
/// or a fill that taught it the object, plans again.
public enum CachePlan: Sendable, Equatable {
    /// A remembered 404 (`negative_ttl`): answer 404 locally.
    case notFound
    /// Nothing stored: fetch upstream with this aligned `Range` (store the answer, fill the slices, answer the
    /// client from the bytes as they come), or nil: forward the request as it is, uncached (a suffix range of an
    /// object of unknown size).
    case fill(upstreamRange: Range<Int>?)
    /// Stored but due (`revalidate_after`, `no-cache`): send these fields upstream (a conditional GET of the first
    /// needed slice) and judge the answer with `Freshness.revalidation`.
    case revalidate(HTTPHeaders)
    /// 304 with these fields, from the cache.
    case notModified(HTTPHeaders)
    /// 412, from the cache.
    case preconditionFailed
    /// Several ranges: send upstream as is, uncached.
    case uncached
    /// Answer from the cache (and upstream for the missing slices).
    case serve(CacheAnswer)
}

/// An answer built from a stored object.
public struct CacheAnswer: Sendable, Equatable {
    /// Status, `Content-Length`, `Content-Range`, and the object's bytes the body carries.
    public var framing: ContentRange
    /// The head's fields: the stored ones, the framing, `Accept-Ranges`, and `X-Cache` when configured.
    public var headers: HTTPHeaders
    /// The slices the body is cut from, in order (empty for HEAD, 416 and empty objects).
    public var slices: Range<Int>
    /// The slices of `slices` to fetch, and the aligned upstream ranges that fetch them.
    public var missing: [Int]
    public var upstreamRanges: [Range<Int>]
}

public enum CachePlanner {
    /// Most slices one upstream `Range` request asks for.
    public static let maxSlicesPerRequest = 16

    /// - Parameters:
    ///   - entry: `SliceStore.lookup`; `knownMissing`: `SliceStore.isKnownMissing`.
    ///   - forcesRevalidation: from `Cacheability.request` (`no-cache`).
    ///   - revalidated: the entry was confirmed upstream for this very request (`X-Cache: REVALIDATED`).
    public static func plan(
        method: String, headers: HTTPHeaders, entry: CachedObject?, knownMissing: Bool, forcesRevalidation: Bool,
        revalidated: Bool = false, now: Int, config: CacheConfig
    ) -> CachePlan {
        if knownMissing && entry == nil { return .notFound }
        guard let entry else { return .fill(upstreamRange: coldRange(headers["Range"], sliceSize: config.sliceSize)) }
        let layout = entry.layout
        let stored = entry.stored
        let due = Freshness.isRevalidationDue(
            validatedAt: entry.validatedAt, now: now,
            revalidateAfter: Cacheability.revalidateAfter(stored, config: config))
        if !revalidated && (due || forcesRevalidation) {
            var fields = Freshness.revalidationHeaders(stored)
            let first = answerBytes(method: method, headers: headers, entry: entry).flatMap {
                layout.slices(covering: $0.bytes).first
            }
            if let first { fields.add(name: "Range", value: SliceLayout.rangeField(layout.bytes(ofSlice: first))) }
            return .revalidate(fields)
        }
        switch ConditionalRequest.evaluate(headers, method: method, stored: stored) {
        case .notModified: return .notModified(ConditionalRequest.notModifiedHeaders(stored))
        case .preconditionFailed: return .preconditionFailed
        case .proceed: break
        }
        guard let framing = answerBytes(method: method, headers: headers, entry: entry) else { return .uncached }
        let slices = method == "HEAD" ? 0..<0 : layout.slices(covering: framing.bytes)
        let missing = entry.missing(slices)
        var fields = stored.headers
        fields.add(name: "Content-Length", value: String(framing.contentLength))
        if let range = framing.contentRange { fields.add(name: "Content-Range", value: range) }
        fields.add(name: "Accept-Ranges", value: "bytes")
        if config.xCacheHeader {
            fields.add(name: "X-Cache", value: !missing.isEmpty ? "MISS" : revalidated ? "REVALIDATED" : "HIT")
        }
        return .serve(
            CacheAnswer(
                framing: framing, headers: fields, slices: slices, missing: missing,
                upstreamRanges: layout.upstreamRanges(missing: missing, maxSlicesPerRequest: maxSlicesPerRequest)))
    }

    /// The framing of the answer, `If-Range` applied; nil for several ranges.
    private static func answerBytes(method: String, headers: HTTPHeaders, entry: CachedObject) -> ContentRange? {
        var range = ClientRange.parse(headers["Range"], objectSize: entry.stored.objectSize)
        if case .proceed(honoursRange: false) = ConditionalRequest.evaluate(
            headers, method: method, stored: entry.stored)
        {
            range = .whole
        }
        return ContentRange.answer(range, objectSize: entry.stored.objectSize)
    }

    /// The aligned range a cold miss fetches first, before the object's size is known: the slices from the one
    /// holding the client's first byte through its last (open ends: `maxSlicesPerRequest` of them; the rest is
    /// planned once the size is known); nil for a suffix range or several ranges.
    static func coldRange(_ field: String?, sliceSize: Int) -> Range<Int>? {
        let wanted: Range<Int>
        switch ClientRange.parse(field, objectSize: Int.max) {
        case .whole: wanted = 0..<Int.max
        case .bytes(let bytes) where !(field ?? "").contains("=-"): wanted = bytes
        default: return nil
        }
        let start = wanted.lowerBound / sliceSize * sliceSize
        let slices = min((wanted.upperBound - 1 - start) / sliceSize + 1, maxSlicesPerRequest)
        return start..<(start + slices * sliceSize)
    }
}
