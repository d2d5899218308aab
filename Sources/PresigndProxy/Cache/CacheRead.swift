import PresigndCache
import PresigndConfig
import PresigndHTTP1

/// A cached answer the connection writes itself: the head, and the slices its body is cut from.
struct CachedHead: Equatable {
    var status: Int
    /// The stored fields and the framing (`CachePlanner`): `Content-Length`, `Content-Range`, `Accept-Ranges`,
    /// `X-Cache` when configured.
    var fields: HTTPHeaders
    /// The object's bytes the body carries, and the slices holding them (empty for HEAD and 304).
    var bytes: Range<Int>
    var slices: Range<Int>
}

/// Where a GET or HEAD of a cached bucket is answered (issue 23 §2 to §5), as far as the connection serves the
/// cache now: locally when the store holds every byte of the answer and the entry is fresh, upstream as before
/// otherwise (a miss, a revalidation due, a missing slice, several ranges, a version asked by id, an answer the
/// cache does not write: 412, 416). Pure; the policy has allowed the request before this is asked.
enum CacheRead: Equatable {
    case upstream
    case local(CachedHead)
    /// Stored whole but due (`revalidate_after`, `no-cache`): send the request upstream with these fields
    /// (`If-None-Match`); a 304 is answered with this head from the slices, anything else passes through.
    case revalidate(CachedHead, fields: HTTPHeaders)
    /// Stored but for one run of missing slices (`run`): answered with this head, the present slices from disk and
    /// the run fetched upstream (with `If-Match` on the stored version) and filled as it passes (`Composition`).
    case compose(CachedHead, run: Range<Int>)

    /// The most slices one cached answer opens before its head is written (before its revalidation is sent): their
    /// descriptors are queued in the client's output until sent (`SocketStream.appendFile`). A larger answer opens
    /// the rest as the output drains (`CachedBodySender`), after the 304 when it is revalidated.
    static let maxSlicesPerAnswer = 16

    static func decide(
        method: String, queryNames: [String], headers: HTTPHeaders, key: String, entry: CachedObject?, now: Int,
        config: CacheConfig
    ) -> CacheRead {
        guard
            case .lookUp(let forcesRevalidation) = Cacheability.request(
                method: method, queryNames: queryNames, headers: headers, key: key, config: config)
        else { return .upstream }
        // A version asked by id is another identity than the latest one the entry holds.
        guard queryNames.isEmpty, let entry else { return .upstream }
        let plan = CachePlanner.plan(
            method: method, headers: headers, entry: entry, knownMissing: false,
            forcesRevalidation: forcesRevalidation, now: now, config: config)
        if case .revalidate = plan {
            // The client's own preconditions would meet ours upstream: its request goes as it is.
            guard !headers.contains(where: { Self.isPrecondition($0.name) }) else { return .upstream }
            let after = CachePlanner.plan(
                method: method, headers: headers, entry: entry, knownMissing: false,
                forcesRevalidation: forcesRevalidation, revalidated: true, now: now, config: config)
            if let composed = compose(after, method: method) { return composed }
            guard case .local(let head) = local(after, method: method) else { return .upstream }
            return .revalidate(head, fields: Freshness.revalidationHeaders(entry.stored))
        }
        if !headers.contains(where: { Self.isPrecondition($0.name) }), let composed = compose(plan, method: method) {
            return composed
        }
        return local(plan, method: method)
    }

    /// A GET missing one run of slices, at most `CachePlanner.maxSlicesPerRequest` of them, whose present slices
    /// fit in one write: `.compose`. The If-Match sent with the run makes it a revalidation too.
    private static func compose(_ plan: CachePlan, method: String) -> CacheRead? {
        guard method == "GET", case .serve(let answer) = plan, let first = answer.missing.first,
            let last = answer.missing.last, answer.framing.status != 416
        else { return nil }
        let run = first..<(last + 1)
        guard answer.missing.count == run.count, run.count <= CachePlanner.maxSlicesPerRequest,
            answer.slices.count - run.count <= maxSlicesPerAnswer
        else { return nil }
        return .compose(
            CachedHead(
                status: answer.framing.status, fields: answer.headers, bytes: answer.framing.bytes,
                slices: answer.slices),
            run: run)
    }

    /// The local answer a plan stands for, or `.upstream`.
    private static func local(_ plan: CachePlan, method: String) -> CacheRead {
        switch plan {
        case .notModified(let fields):
            return .local(CachedHead(status: 304, fields: fields, bytes: 0..<0, slices: 0..<0))
        case .serve(let answer):
            guard answer.missing.isEmpty, answer.framing.status != 416 else { return .upstream }
            return .local(
                CachedHead(
                    status: answer.framing.status, fields: answer.headers,
                    bytes: method == "HEAD" ? 0..<0 : answer.framing.bytes, slices: answer.slices))
        case .notFound, .fill, .revalidate, .preconditionFailed, .uncached:
            return .upstream
        }
    }

    /// Whether a GET the cache does not answer itself records the upstream's answer (issue 23 §6): a cacheable
    /// request for the latest version (no `versionId`); `CacheFill` then judges the answer.
    static func fillsOnMiss(method: String, queryNames: [String], headers: HTTPHeaders, key: String, config: CacheConfig)
        -> Bool
    {
        guard method == "GET", queryNames.isEmpty,
            case .lookUp = Cacheability.request(
                method: method, queryNames: queryNames, headers: headers, key: key, config: config)
        else { return false }
        return true
    }

    /// RFC 9110 §13.1 preconditions.
    static func isPrecondition(_ name: String) -> Bool {
        // Asked of every field of every cached GET: compared in place (length first), no lower-cased copy.
        ASCII.equalsLowercase(name, "if-match") || ASCII.equalsLowercase(name, "if-none-match")
            || ASCII.equalsLowercase(name, "if-modified-since") || ASCII.equalsLowercase(name, "if-unmodified-since")
            || ASCII.equalsLowercase(name, "if-range")
    }

    /// What an upstream answer to a revalidation means for the request (issue 23 §3): a 304 is answered from the
    /// slices (the entry is validated now); a 200/206 of the same version passes through and validates it; one of
    /// another version, or a 404, passes through and drops the entry (never mixed); anything else passes through
    /// and leaves the entry as it is (stale is not served: the next use asks again).
    enum Outcome: Equatable {
        case serveCached
        case passThrough(validates: Bool, invalidates: Bool)
    }

    static func outcome(of head: ResponseHead, stored: StoredResponse) -> Outcome {
        // `Freshness` reads `headers`: the proxy's decoder leaves a head's fields raw, to forward as they came.
        let parsed = (try? head.parsingRawFields()) ?? head
        switch Freshness.revalidation(parsed, stored: stored) {
        case .unchanged: return head.status == 304 ? .serveCached : .passThrough(validates: true, invalidates: false)
        case .replaced, .gone: return .passThrough(validates: false, invalidates: true)
        case .unknown: return .passThrough(validates: false, invalidates: false)
        }
    }
}

/// A miss asking for part of an object, widened to whole slices upstream (issue 23 §3, §6), so every byte fetched
/// lands in a slice the cache can keep; the client still gets exactly the bytes it asked for (`CacheFill` trims
/// the answer). Pure.
struct WidenedRange: Equatable {
    /// The `Range` field sent upstream.
    var field: String
    /// The bytes the client asked for; the upper bound is `Int.max` for an open end (`bytes=N-`) of an object of
    /// unknown size.
    var wanted: Range<Int>

    /// Nil when nothing needs widening: no range, several or a suffix range (`bytes=-N`: their first byte depends
    /// on the size), or a range already on slice boundaries. A range starting past the end of an object of unknown
    /// size may come back as a 206 of the slice before: `CacheFill.begin` answers it 416, as S3 would.
    static func widen(_ field: String?, objectSize: Int?, sliceSize: Int) -> WidenedRange? {
        guard let field, !field.contains("=-"), !field.contains(","),
            case .bytes(let wanted) = ClientRange.parse(field, objectSize: objectSize ?? Int.max)
        else { return nil }
        let start = wanted.lowerBound / sliceSize * sliceSize
        var end: Int? = nil  // exclusive; nil: to the object's end
        if wanted.upperBound != Int.max {
            let rounded = (wanted.upperBound + sliceSize - 1) / sliceSize * sliceSize
            end = objectSize.map { min(rounded, $0) } ?? rounded
        }
        if let objectSize, end == objectSize { end = nil }
        let widened = "bytes=\(start)-" + (end.map { String($0 - 1) } ?? "")
        let wantedEnd = wanted.upperBound == Int.max || wanted.upperBound == objectSize ? nil : wanted.upperBound
        guard start != wanted.lowerBound || end != wantedEnd else { return nil }
        return WidenedRange(field: widened, wanted: wanted)
    }
}
