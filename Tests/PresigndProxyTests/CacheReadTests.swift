import PresigndCache
import PresigndConfig
import PresigndHTTP1
import Testing

@testable import PresigndProxy

@Suite struct CacheReadTests {
    static let slice = 1 << 16
    static let now = 1_000_000

    static func config(revalidateAfter: ConfigDuration = .hours(1)) -> CacheConfig {
        var config = CacheConfig(directory: "/nonexistent", maxSize: 1 << 30)
        config.sliceSize = slice
        config.revalidateAfter = revalidateAfter
        config.xCacheHeader = true
        return config
    }

    static func entry(size: Int = 3 * slice + 10, present: [Int]? = nil, validatedAt: Int = now - 1000)
        -> CachedObject
    {
        let layout = SliceLayout(objectSize: size, sliceSize: slice)
        return CachedObject(
            identity: ObjectIdentity(
                name: ObjectName(upstream: "u", bucket: "b", key: "k"), version: ObjectVersion(etag: "\"e\"")),
            stored: StoredResponse(objectSize: size, headers: ["ETag": "\"e\"", "Content-Type": "text/plain"]),
            layout: layout, validatedAt: validatedAt, presentSlices: present ?? Array(0..<layout.sliceCount))
    }

    static func decide(
        _ method: String = "GET", _ headers: HTTPHeaders = [:], query: [String] = [], entry: CachedObject? = entry(),
        config: CacheConfig = config()
    ) -> CacheRead {
        CacheRead.decide(
            method: method, queryNames: query, headers: headers, key: "k", entry: entry, now: now, config: config)
    }

    @Test func aFreshWholeEntryIsAnsweredLocallyFromEverySlice() {
        guard case .local(let head) = Self.decide() else {
            Issue.record("not local")
            return
        }
        #expect(head.status == 200)
        #expect(head.bytes == 0..<(3 * Self.slice + 10))
        #expect(head.slices == 0..<4)
        #expect(head.fields["Content-Length"] == String(3 * Self.slice + 10))
        #expect(head.fields["ETag"] == "\"e\"")
        #expect(head.fields["X-Cache"] == "HIT")
    }

    /// The client's own preconditions, in any case, are recognised by name; other `If…` and lookalike names are not.
    @Test func preconditionFieldsAreRecognisedInAnyCase() {
        for name in ["If-Match", "if-none-match", "IF-MODIFIED-SINCE", "If-Unmodified-Since", "If-Range"] {
            #expect(CacheRead.isPrecondition(name), "\(name)")
        }
        for name in ["If", "If-", "If-Matches", "X-If-Match", "Range", "", "If-None-Match2"] {
            #expect(!CacheRead.isPrecondition(name), "\(name)")
        }
    }

    @Test func aRangeIsAnsweredFromTheSlicesItCovers() {
        let decided = Self.decide("GET", ["Range": "bytes=65530-65545"])
        guard case .local(let head) = decided else {
            Issue.record("not local: \(decided)")
            return
        }
        #expect(head.status == 206)
        #expect(head.bytes == 65530..<65546)
        #expect(head.slices == 0..<2)
        #expect(head.fields["Content-Range"] == "bytes 65530-65545/\(3 * Self.slice + 10)")
    }

    @Test func headAndNotModifiedCarryNoBody() {
        guard case .local(let head) = Self.decide("HEAD"),
            case .local(let notModified) = Self.decide(
                "GET", ["If-None-Match": "\"e\""])
        else {
            Issue.record("not local")
            return
        }
        #expect(head.status == 200 && head.bytes.isEmpty && head.slices.isEmpty)
        #expect(head.fields["Content-Length"] == String(3 * Self.slice + 10))
        #expect(notModified.status == 304 && notModified.slices.isEmpty)
    }

    @Test func whatTheCacheCannotAnswerWhollyAndFreshGoesUpstream() {
        // A miss, a missing slice, a version by id, several ranges, an unsatisfiable range, a 412, a revalidation
        // due with the client's own preconditions.
        #expect(Self.decide(entry: nil) == .upstream)
        #expect(Self.decide(entry: Self.entry(present: [1, 3])) == .upstream)  // two runs missing
        #expect(Self.decide("GET", ["Range": "bytes=0-10"], entry: Self.entry(present: [0])) != .upstream)
        #expect(Self.decide(query: ["versionId"]) == .upstream)
        #expect(Self.decide("GET", ["Range": "bytes=0-1,5-6"]) == .upstream)
        #expect(Self.decide("GET", ["Range": "bytes=999999999-"]) == .upstream)
        #expect(Self.decide("GET", ["If-Match": "\"other\""]) == .upstream)
        #expect(Self.decide("PUT") == .upstream)
        let due = Self.config(revalidateAfter: .seconds(0))
        // A fresh answer of any size is local (its slices after the first 16 are opened as the client reads).
        #expect(Self.decide(entry: Self.entry(size: 17 * Self.slice)) != .upstream)
        // Due, it is revalidated whatever its size (the slices after the first 16 follow the 304).
        guard case .revalidate(let large, _) = Self.decide(entry: Self.entry(size: 17 * Self.slice), config: due) else {
            Issue.record("a due answer of 17 slices is not revalidated")
            return
        }
        #expect(large.slices == 0..<17)
        #expect(Self.decide("GET", ["If-Modified-Since": "Tue, 01 Dec 2026 10:00:00 GMT"], config: due) == .upstream)
        #expect(Self.decide("GET", ["If-None-Match": "\"x\""], entry: Self.entry(present: [0])) == .upstream)
    }

    @Test func oneMissingRunIsComposedFromTheSlicesAndAFetchOfTheRun() {
        guard case .compose(let head, let run) = Self.decide(entry: Self.entry(present: [0, 1, 3])) else {
            Issue.record("not composed")
            return
        }
        #expect(run == 2..<3 && head.slices == 0..<4 && head.status == 200)
        #expect(head.fields["X-Cache"] == "MISS" && head.fields["Content-Length"] == String(3 * Self.slice + 10))
        // Due (revalidate_after 0): composed too, the If-Match on the run revalidates.
        let due = Self.config(revalidateAfter: .seconds(0))
        guard case .compose(_, let dueRun) = Self.decide(entry: Self.entry(present: [0]), config: due) else {
            Issue.record("a due entry is not composed")
            return
        }
        #expect(dueRun == 1..<4)
        // A range needing only missing slices: the run is exactly those.
        guard case .compose(let part, let partRun) = Self.decide(
            "GET", ["Range": "bytes=\(2 * Self.slice + 5)-\(2 * Self.slice + 9)"], entry: Self.entry(present: [0, 1, 3]))
        else {
            Issue.record("a range is not composed")
            return
        }
        #expect(partRun == 2..<3 && part.status == 206 && part.bytes == (2 * Self.slice + 5)..<(2 * Self.slice + 10))
        #expect(Self.decide("HEAD", entry: Self.entry(present: [0, 1, 3])) != .compose(part, run: partRun))
    }

    @Test func aDueEntryIsRevalidatedWithItsETagAndAnsweredAsRevalidated() {
        // The default revalidate_after = 0 (every use), and a client's no-cache on a fresh entry.
        for decided in [
            Self.decide(config: Self.config(revalidateAfter: .seconds(0))),
            Self.decide("GET", ["Cache-Control": "no-cache"]),
        ] {
            guard case .revalidate(let head, let fields) = decided else {
                Issue.record("not a revalidation: \(decided)")
                continue
            }
            #expect(fields["If-None-Match"] == "\"e\"")
            #expect(head.status == 200 && head.slices == 0..<4)
            #expect(head.fields["X-Cache"] == "REVALIDATED")
        }
    }

    @Test func theUpstreamAnswerToARevalidationDecidesWhatIsServed() {
        let stored = Self.entry().stored
        func head(_ status: Int, _ fields: HTTPHeaders = [:]) -> ResponseHead {
            ResponseHead(status: status, headers: fields)
        }
        let size = String(3 * Self.slice + 10)
        #expect(CacheRead.outcome(of: head(304), stored: stored) == .serveCached)
        #expect(
            CacheRead.outcome(of: head(200, ["ETag": "\"e\"", "Content-Length": size]), stored: stored)
                == .passThrough(validates: true, invalidates: false))
        #expect(
            CacheRead.outcome(of: head(200, ["ETag": "\"new\"", "Content-Length": size]), stored: stored)
                == .passThrough(validates: false, invalidates: true))
        #expect(CacheRead.outcome(of: head(404), stored: stored) == .passThrough(validates: false, invalidates: true))
        #expect(CacheRead.outcome(of: head(503), stored: stored) == .passThrough(validates: false, invalidates: false))
        #expect(CacheRead.outcome(of: head(403), stored: stored) == .passThrough(validates: false, invalidates: false))
    }

    /// The proxy's decoder leaves a head's fields raw (only framing parsed): a new ETag there was read as no ETag
    /// at all, so a changed object passed through without dropping the old one (found by test_cache_revalidation).
    @Test func aNewVersionInRawFieldsIsSeen() {
        var changed = ResponseHead(status: 200, headers: ["Content-Length": "18"])
        changed.rawFields = Array("etag: \"v2\"\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n".utf8)
        #expect(
            CacheRead.outcome(of: changed, stored: Self.entry().stored)
                == .passThrough(validates: false, invalidates: true))
        var same = ResponseHead(status: 200, headers: [:])
        same.rawFields = Array("ETag: \"e\"\r\nContent-Length: \(3 * Self.slice + 10)\r\n".utf8)
        #expect(
            CacheRead.outcome(of: same, stored: Self.entry().stored)
                == .passThrough(validates: true, invalidates: false))
    }
}
