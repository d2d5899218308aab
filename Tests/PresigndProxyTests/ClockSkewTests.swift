import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// Clock-skew correction (issue 21 §4): the offset rules and the shared clock.
@Suite struct ClockSkewTests {
    @Test func takesTheUpstreamsOffsetOnceItIsMoreThanTheDatesResolution() {
        #expect(ClockSkew.updatedOffset(current: 0, upstreamDate: 1_000_001, localNow: 1_000_000) == nil)
        #expect(ClockSkew.updatedOffset(current: 0, upstreamDate: 1_000_002, localNow: 1_000_000) == nil)
        #expect(ClockSkew.updatedOffset(current: 0, upstreamDate: 1_001_200, localNow: 1_000_000) == 1200)
        #expect(ClockSkew.updatedOffset(current: 0, upstreamDate: 998_800, localNow: 1_000_000) == -1200)
        // Once corrected, the same reading changes nothing; a clock back in step returns the offset to 0.
        #expect(ClockSkew.updatedOffset(current: 1200, upstreamDate: 1_001_201, localNow: 1_000_000) == nil)
        #expect(ClockSkew.updatedOffset(current: 1200, upstreamDate: 1_000_001, localNow: 1_000_000) == 0)
    }

    @Test(arguments: ["RequestTimeTooSkewed", "RequestExpired", "SignatureDoesNotMatch"])
    func aSkewErrorWithAFarDateIsARejection(code: String) {
        #expect(ClockSkew.isSkewRejection(code: code, upstreamDate: 2_000, signedAt: 800))
        #expect(!ClockSkew.isSkewRejection(code: code, upstreamDate: 830, signedAt: 800))
        #expect(!ClockSkew.isSkewRejection(code: code, upstreamDate: nil, signedAt: 800))
    }

    @Test func otherErrorsAreNotSkewRejections() {
        #expect(!ClockSkew.isSkewRejection(code: "AccessDenied", upstreamDate: 2_000, signedAt: 800))
        #expect(!ClockSkew.isSkewRejection(code: nil, upstreamDate: 2_000, signedAt: 800))
    }

    @Test func theSharedClockWarnsOncePastAMinute() {
        let clock = UpstreamClock(name: "r2")
        #expect(clock.observe(upstreamDate: 1_000_030, localNow: 1_000_000)! == (30, false))
        #expect(clock.offsetSeconds == 30)
        #expect(clock.observe(upstreamDate: 1_001_200, localNow: 1_000_000)! == (1200, true))
        #expect(clock.observe(upstreamDate: 1_000_000, localNow: 1_000_000)! == (0, false))
        #expect(clock.observe(upstreamDate: 1_002_000, localNow: 1_000_000)! == (2000, false))
        #expect(clock.observe(upstreamDate: 1_002_001, localNow: 1_000_000) == nil)
    }

    @Test func clocksAreKeptByNameAcrossLookups() {
        let clocks = UpstreamClocks()
        let first = clocks.clock(named: "r2")
        _ = first.observe(upstreamDate: 500, localNow: 0)
        #expect(clocks.clock(named: "r2") === first)
        #expect(clocks.clock(named: "s3").offsetSeconds == 0)
        #expect(clocks.all.map(\.name) == ["r2", "s3"])
    }

    @Test func readsAResponseFieldFromRawFieldLines() {
        var head = ResponseHead(status: 503)
        head.rawFields = Array(
            "Content-Type: application/xml\r\nDATE:  Sun, 06 Nov 1994 08:49:37 GMT \r\nRetry-After: 1\r\n".utf8)
        #expect(head.firstValue(ofLowercasedField: "date") == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(head.firstValue(ofLowercasedField: "retry-after") == "1")
        #expect(head.firstValue(ofLowercasedField: "etag") == nil)
        #expect(head.firstValue(ofLowercasedField: "content") == nil)
    }
}
