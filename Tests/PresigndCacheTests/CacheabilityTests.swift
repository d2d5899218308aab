import PresigndCache
import PresigndConfig
import PresigndHTTP1
import Testing

/// What may be answered from the cache and what may be stored (issue 23 §4).
@Suite struct CacheabilityTests {
    private func request(
        _ method: String = "GET", query: [String] = [], _ fields: [(String, String)] = [], key: String = "a/b",
        config: CacheConfig = cacheConfig()
    ) -> Cacheability.RequestVerdict {
        Cacheability.request(method: method, queryNames: query, headers: HTTPHeaders(fields), key: key, config: config)
    }

    @Test func plainGetAndHeadAreLookedUp() {
        #expect(request() == .lookUp(forcesRevalidation: false))
        #expect(request("HEAD") == .lookUp(forcesRevalidation: false))
        #expect(request(query: ["versionId"]) == .lookUp(forcesRevalidation: false))
        #expect(request("GET", [("Range", "bytes=0-99")]) == .lookUp(forcesRevalidation: false))
    }

    @Test(arguments: [
        (Cacheability.RequestVerdict.bypass(.method), "PUT", [String](), [(String, String)]()),
        (.bypass(.queryParameter), "GET", ["partNumber"], []),
        (.bypass(.queryParameter), "GET", ["response-content-type"], []),
        (.bypass(.customerKey), "GET", [], [("x-amz-server-side-encryption-customer-key", "k")]),
        (.bypass(.customerKey), "GET", [], [("X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256")]),
        (.bypass(.clientNoStore), "GET", [], [("Cache-Control", "max-age=0, no-store")]),
        (.bypass(.multipleRanges), "GET", [], [("Range", "bytes=0-1,5-9")]),
        (.lookUp(forcesRevalidation: true), "GET", [], [("Cache-Control", "no-cache")]),
        (.lookUp(forcesRevalidation: true), "GET", [], [("Pragma", "no-cache")]),
    ])
    func requestRules(
        expected: Cacheability.RequestVerdict, method: String, query: [String], fields: [(String, String)]
    ) {
        #expect(request(method, query: query, fields) == expected)
    }

    @Test func keysOutsideIncludePrefixesBypass() {
        let config = cacheConfig { $0.includePrefixes = ["assets/"] }
        #expect(request(key: "assets/app.js", config: config) == .lookUp(forcesRevalidation: false))
        #expect(request(key: "private/x", config: config) == .bypass(.excludedKey))
    }

    private let object: [(String, String)] = [
        ("Content-Length", "1000"), ("ETag", "\"e1\""), ("Content-Type", "image/jpeg"),
        ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"), ("x-amz-request-id", "R"), ("Date", "D"),
        ("x-amz-meta-owner", "me"),
    ]

    @Test func storesAWholeAnswerWithItsReplayableFields() throws {
        guard case .store(let stored) = Cacheability.response(response(200, object), config: cacheConfig()) else {
            Issue.record("expected store")
            return
        }
        #expect(stored.objectSize == 1000)
        #expect(stored.version == ObjectVersion(etag: "\"e1\""))
        #expect(stored.headers["Content-Type"] == "image/jpeg" && stored.headers["x-amz-meta-owner"] == "me")
        #expect(stored.headers["x-amz-request-id"] == nil && stored.headers["Date"] == nil)
        #expect(stored.headers["Content-Length"] == nil)
        #expect(stored.lastModified == 784_111_777)
    }

    @Test func replayableNamesIgnoreCaseAndUserMetadataIsKept() {
        for name in [
            "ETAG", "etag", "Content-Type", "X-Amz-Meta-Owner", "x-amz-meta-", "X-AMZ-VERSION-ID",
            "x-amz-server-side-encryption-bucket-key-enabled",
        ] {
            #expect(StoredResponse.isReplayable(name), "\(name)")
        }
        for name in [
            "Content-Length", "Content-Range", "x-amz-meta", "x-amz-metadata", "ETags", "Tag", "",
            "x-amz-request-id", "Vary", "x-amz-server-side-encryption-customer-algorithm",
        ] {
            #expect(!StoredResponse.isReplayable(name), "\(name)")
        }
    }

    @Test func aSliceAnswerGivesTheWholeObjectsSize() {
        let head = response(206, [("Content-Range", "bytes 0-1048575/5000000"), ("ETag", "\"e\"")])
        guard case .store(let stored) = Cacheability.response(head, config: cacheConfig()) else {
            Issue.record("expected store")
            return
        }
        #expect(stored.objectSize == 5_000_000)
    }

    @Test(arguments: [
        (Cacheability.Reason.noStore, [("Cache-Control", "no-store")]),
        (.isPrivate, [("Cache-Control", "private, max-age=60")]),
        (.vary, [("Vary", "Origin")]),
        (.setCookie, [("Set-Cookie", "a=b")]),
        (.customerKey, [("x-amz-server-side-encryption-customer-algorithm", "AES256")]),
    ])
    func answersThatAreNotStored(reason: Cacheability.Reason, extra: [(String, String)]) {
        #expect(Cacheability.response(response(200, object + extra), config: cacheConfig()) == .doNotStore(reason))
    }

    @Test func answersWithoutETagLengthOrTooLargeAreNotStored() {
        let noETag = response(200, [("Content-Length", "5")])
        #expect(Cacheability.response(noETag, config: cacheConfig()) == .doNotStore(.noETag))
        let chunked = response(200, [("ETag", "\"e\""), ("Transfer-Encoding", "chunked")])
        #expect(Cacheability.response(chunked, config: cacheConfig()) == .doNotStore(.noLength))
        let small = cacheConfig { $0.maxObjectSize = 999 }
        #expect(Cacheability.response(response(200, object), config: small) == .doNotStore(.tooLarge))
    }

    @Test(arguments: [403, 500, 503, 301, 304, 412])
    func errorsAreNeverStored(status: Int) {
        let config = cacheConfig { $0.negativeTTL = .seconds(30) }
        #expect(Cacheability.response(response(status, object), config: config) == .doNotStore(.status))
    }

    @Test func notFoundIsRememberedOnlyWithANegativeTTL() {
        #expect(Cacheability.response(response(404, []), config: cacheConfig()) == .doNotStore(.status))
        let config = cacheConfig { $0.negativeTTL = .seconds(30) }
        #expect(Cacheability.response(response(404, []), config: config) == .rememberMissing)
    }

    @Test func anObjectMarkedNoCacheIsRevalidatedEveryUse() throws {
        let config = cacheConfig { $0.revalidateAfter = .minutes(5) }
        let plain = try #require(StoredResponse(upstream: response(200, object)))
        let marked = try #require(StoredResponse(upstream: response(200, object + [("Cache-Control", "no-cache")])))
        #expect(Cacheability.revalidateAfter(plain, config: config) == .minutes(5))
        #expect(Cacheability.revalidateAfter(marked, config: config) == .seconds(0))
    }
}
