import PresigndCache
import PresigndConfig
import PresigndHTTP1
import Testing

/// The one decision per cacheable request: local answers, revalidation, slices to send and to fetch.
@Suite struct CachePlannerTests {
    private let mib = 1 << 20
    private var entry: CachedObject {
        CachedObject(
            identity: ObjectIdentity(name: objectName("v.mp4"), version: ObjectVersion(etag: "\"e\"")),
            stored: StoredResponse(
                objectSize: 10 * mib + 5,
                headers: [
                    "ETag": "\"e\"", "Content-Type": "video/mp4", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
                ]),
            layout: SliceLayout(objectSize: 10 * mib + 5, sliceSize: mib), validatedAt: 1000,
            presentSlices: [0, 1, 2, 5])
    }
    private let fresh = cacheConfig {
        $0.revalidateAfter = .minutes(1)
        $0.xCacheHeader = true
    }

    @Test func theMissingSlicesOfARangeAreThoseNotPresentWhateverTheRange() {
        // Against the definition (a filter over a set) for every range of an object whose presence is uneven.
        var present = entry
        present.present = [0, 1, 2, 5, 7, 8, 10]
        let set = present.present
        for lower in 0...11 {
            for upper in lower...11 {
                let expected = (lower..<upper).filter { !set.contains($0) }
                #expect(present.missing(lower..<upper) == expected, "\(lower)..<\(upper)")
            }
        }
        present.present = []
        #expect(present.missing(2..<5) == [2, 3, 4])
        present.present = Set(0..<4096)
        #expect(present.missing(4000..<4100) == Array(4096..<4100))
    }

    private func plan(
        _ fields: [(String, String)] = [], method: String = "GET", entry: CachedObject? = nil, missing: Bool = false,
        noCache: Bool = false, revalidated: Bool = false, now: Int = 2000, config: CacheConfig? = nil
    ) -> CachePlan {
        CachePlanner.plan(
            method: method, headers: HTTPHeaders(fields), entry: entry, knownMissing: missing,
            forcesRevalidation: noCache, revalidated: revalidated, now: now, config: config ?? fresh)
    }

    @Test func aColdMissFetchesAlignedSlicesFromTheClientsFirstByte() {
        #expect(plan() == .fill(upstreamRange: 0..<16 * mib))
        #expect(plan([("Range", "bytes=0-99")]) == .fill(upstreamRange: 0..<mib))
        #expect(plan([("Range", "bytes=\(3 * mib + 7)-\(5 * mib)")]) == .fill(upstreamRange: 3 * mib..<6 * mib))
        #expect(plan([("Range", "bytes=\(40 * mib)-")]) == .fill(upstreamRange: 40 * mib..<56 * mib))
        #expect(plan([("Range", "bytes=-100")]) == .fill(upstreamRange: nil))
        #expect(plan(missing: true) == .notFound)
    }

    @Test func aFreshHitServesPresentSlicesAndFetchesTheMissingOnes() {
        guard case .serve(let answer) = plan([("Range", "bytes=\(mib + 10)-\(4 * mib)")], entry: entry) else {
            Issue.record("expected serve")
            return
        }
        #expect(answer.framing.status == 206 && answer.framing.contentLength == 3 * mib - 9)
        #expect(answer.headers["Content-Range"] == "bytes \(mib + 10)-\(4 * mib)/\(10 * mib + 5)")
        #expect(answer.headers["Content-Length"] == String(3 * mib - 9) && answer.headers["Accept-Ranges"] == "bytes")
        #expect(answer.headers["Content-Type"] == "video/mp4" && answer.headers["X-Cache"] == "MISS")
        #expect(answer.slices == 1..<5 && answer.missing == [3, 4] && answer.upstreamRanges == [3 * mib..<5 * mib])
    }

    @Test func aWholeHitNeedsNoUpstreamAndSaysHit() {
        let whole = CachedObject(
            identity: entry.identity, stored: entry.stored, layout: entry.layout, validatedAt: 1000,
            presentSlices: Array(0..<11))
        guard case .serve(let answer) = plan(entry: whole) else {
            Issue.record("expected serve")
            return
        }
        #expect(answer.framing.status == 200 && answer.headers["Content-Length"] == String(10 * mib + 5))
        #expect(answer.missing.isEmpty && answer.upstreamRanges.isEmpty && answer.headers["X-Cache"] == "HIT")
        guard case .serve(let head) = plan(method: "HEAD", entry: whole) else {
            Issue.record("expected serve")
            return
        }
        #expect(head.slices.isEmpty && head.headers["Content-Length"] == String(10 * mib + 5))
    }

    @Test func aDueEntryIsRevalidatedWithTheFirstNeededSlice() {
        let expected: HTTPHeaders = ["If-None-Match": "\"e\"", "Range": "bytes=\(2 * mib)-\(3 * mib - 1)"]
        #expect(plan([("Range", "bytes=\(2 * mib)-")], entry: entry, now: 61_000) == .revalidate(expected))
        #expect(plan([("Range", "bytes=\(2 * mib)-")], entry: entry, noCache: true) == .revalidate(expected))
        #expect(plan([("Range", "bytes=\(2 * mib)-")], entry: entry, config: cacheConfig()) == .revalidate(expected))
        // After the revalidation, the same request is served and says so.
        guard case .serve(let answer) = plan(entry: entry, revalidated: true, now: 61_000) else {
            Issue.record("expected serve")
            return
        }
        #expect(answer.headers["X-Cache"] == "MISS")
    }

    @Test func preconditionsAreAnsweredLocallyWhenFresh() {
        #expect(
            plan([("If-None-Match", "\"e\"")], entry: entry)
                == .notModified(["ETag": "\"e\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(plan([("If-Match", "\"x\"")], entry: entry) == .preconditionFailed)
        #expect(plan([("Range", "bytes=0-1,4-5")], entry: entry) == .uncached)
        guard case .serve(let ignored) = plan([("Range", "bytes=0-1"), ("If-Range", "\"old\"")], entry: entry) else {
            Issue.record("expected serve")
            return
        }
        #expect(ignored.framing.status == 200)
        guard case .serve(let none) = plan([("Range", "bytes=\(20 * mib)-")], entry: entry) else {
            Issue.record("expected serve")
            return
        }
        #expect(none.framing.status == 416 && none.slices.isEmpty)
    }
}
