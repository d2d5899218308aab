import Testing

@testable import PresigndProxy

@Suite struct LogRateLimiterTests {
    @Test func logsTheFirstEventThenAtMostOncePerIntervalWithTheCountSinceTheLastLine() {
        var limiter = LogRateLimiter(intervalMilliseconds: 1000)
        #expect(limiter.record(now: 0) == 1)
        // 100 failures within the second: none logged.
        for now in stride(from: 10, through: 990, by: 10) { #expect(limiter.record(now: now) == nil) }
        // The next one a second on carries all of them and itself.
        #expect(limiter.record(now: 1000) == 100)
        #expect(limiter.record(now: 1500) == nil)
        #expect(limiter.record(now: 5000) == 2)
    }
}

@Suite struct ShedAnswerTests {
    @Test func aShedConnectionGetsA503SlowDownWithRetryAfterAndIsClosed() {
        let bytes = LocalAnswerEncoding.closingError(.slowDown("busy"), requestID: "R1", resource: "/")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(text.contains("\r\nRetry-After: 1\r\n"))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.contains("<Code>SlowDown</Code>"))
        #expect(text.contains("x-amz-error-code: SlowDown\r\n"))
    }

    @Test func errorsThatDoNotPassWithLoadCarryNoRetryAfter() {
        #expect(ProxyError.entityTooLarge.retryAfterSeconds == nil)
        #expect(ProxyError.insufficientStorage.statusAndCode.status == 507)
        #expect(ProxyError.bodyTooSlow.statusAndCode == (408, "RequestTimeout"))
    }
}
