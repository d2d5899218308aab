import PresigndCache
import PresigndConfig
import PresigndHTTP1
import Testing

/// Preconditions answered from a fresh stored object (RFC 9110 §13.2.2), HTTP-dates, revalidation.
@Suite struct ConditionalRequestTests {
    private let stored = StoredResponse(
        objectSize: 10,
        headers: [
            "ETag": "\"abc\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Cache-Control": "max-age=60",
            "Content-Type": "text/plain",
        ])

    private func evaluate(_ fields: [(String, String)], method: String = "GET") -> ConditionalRequest.Outcome {
        ConditionalRequest.evaluate(HTTPHeaders(fields), method: method, stored: stored)
    }

    @Test(arguments: [
        ([(String, String)](), ConditionalRequest.Outcome.proceed(honoursRange: true)),
        ([("If-None-Match", "\"abc\"")], .notModified),
        ([("If-None-Match", "W/\"abc\"")], .notModified),
        ([("If-None-Match", "\"x\", \"abc\"")], .notModified),
        ([("If-None-Match", "*")], .notModified),
        ([("If-None-Match", "\"x\"")], .proceed(honoursRange: true)),
        ([("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")], .notModified),
        ([("If-Modified-Since", "Mon, 07 Nov 1994 08:49:37 GMT")], .notModified),
        ([("If-Modified-Since", "Sat, 05 Nov 1994 08:49:37 GMT")], .proceed(honoursRange: true)),
        ([("If-Modified-Since", "Sunday, 06-Nov-94 08:49:37 GMT")], .proceed(honoursRange: true)),
        // If-None-Match wins over If-Modified-Since (step 3 before 4).
        (
            [("If-None-Match", "\"x\""), ("If-Modified-Since", "Mon, 07 Nov 1994 08:49:37 GMT")],
            .proceed(honoursRange: true)
        ),
        ([("If-Match", "\"abc\"")], .proceed(honoursRange: true)),
        ([("If-Match", "\"x\"")], .preconditionFailed),
        ([("If-Match", "W/\"abc\"")], .preconditionFailed),
        ([("If-Unmodified-Since", "Sat, 05 Nov 1994 08:49:37 GMT")], .preconditionFailed),
        ([("If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")], .proceed(honoursRange: true)),
        ([("Range", "bytes=0-1"), ("If-Range", "\"abc\"")], .proceed(honoursRange: true)),
        ([("Range", "bytes=0-1"), ("If-Range", "\"old\"")], .proceed(honoursRange: false)),
        ([("Range", "bytes=0-1"), ("If-Range", "W/\"abc\"")], .proceed(honoursRange: false)),
        ([("Range", "bytes=0-1"), ("If-Range", "Sun, 06 Nov 1994 08:49:37 GMT")], .proceed(honoursRange: true)),
        ([("Range", "bytes=0-1"), ("If-Range", "Mon, 07 Nov 1994 08:49:37 GMT")], .proceed(honoursRange: false)),
    ])
    func preconditions(fields: [(String, String)], expected: ConditionalRequest.Outcome) {
        #expect(evaluate(fields) == expected)
    }

    @Test func headIsAnsweredNotModifiedToo() {
        #expect(evaluate([("If-None-Match", "\"abc\"")], method: "HEAD") == .notModified)
    }

    @Test func notModifiedRepeatsTheValidatorsAndCachingFields() {
        let headers = ConditionalRequest.notModifiedHeaders(stored)
        #expect(headers["ETag"] == "\"abc\"" && headers["Last-Modified"] != nil && headers["Cache-Control"] != nil)
        #expect(headers["Content-Type"] == nil)
    }

    @Test(arguments: [
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
        ("Tue, 29 Feb 2000 23:59:59 GMT", 951_868_799),
        ("Fri, 05 Dec 2026 16:00:00 GMT", 1_796_486_400),
    ])
    func parsesIMFFixdate(text: String, seconds: Int) {
        #expect(HTTPDate.parse(text) == seconds)
    }

    @Test(arguments: [
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun Nov  6 08:49:37 1994", "",
        "Sun, 06 Nov 1994 25:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT",
        "Sun, 06 Nov 19a4 08:49:37 GMT", "Sun, 06 Nov 1994 08-49-37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:60:37 GMT", "Sun,x06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMTX",
        "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 gmt",
    ])
    func rejectsOtherDateForms(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func revalidationIsDueByTheConfiguredInterval() {
        #expect(Freshness.isRevalidationDue(validatedAt: 1000, now: 1000, revalidateAfter: .seconds(0)))
        #expect(!Freshness.isRevalidationDue(validatedAt: 1000, now: 60_999, revalidateAfter: .minutes(1)))
        #expect(Freshness.isRevalidationDue(validatedAt: 1000, now: 61_000, revalidateAfter: .minutes(1)))
        #expect(Freshness.isRevalidationDue(validatedAt: 5000, now: 1000, revalidateAfter: .minutes(1)))
    }

    @Test func revalidationAnswersSayWhetherTheObjectChanged() {
        #expect(Freshness.revalidationHeaders(stored)["If-None-Match"] == "\"abc\"")
        #expect(Freshness.revalidation(response(304, []), stored: stored) == .unchanged)
        let same = response(200, [("ETag", "\"abc\""), ("Content-Length", "10")])
        #expect(Freshness.revalidation(same, stored: stored) == .unchanged)
        let changed = response(200, [("ETag", "\"new\""), ("Content-Length", "12")])
        guard case .replaced(let fresh) = Freshness.revalidation(changed, stored: stored) else {
            Issue.record("expected replaced")
            return
        }
        #expect(fresh.objectSize == 12 && fresh.version?.etag == "\"new\"")
        let newSlice = response(206, [("ETag", "\"new\""), ("Content-Range", "bytes 0-4/10")])
        #expect(Freshness.revalidation(newSlice, stored: stored) != .unchanged)
        #expect(Freshness.revalidation(response(404, []), stored: stored) == .gone)
        #expect(Freshness.revalidation(response(503, []), stored: stored) == .unknown)
    }
}
