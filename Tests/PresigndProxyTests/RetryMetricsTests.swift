import Testing

@testable import PresigndProxy

/// Retries and clock offsets on `/metrics` (issue 21): counted per worker, summed across workers, per upstream.
@Suite struct RetryMetricsTests {
    @Test func sumsRetriesAndOutcomesAcrossWorkersPerUpstream() {
        let first = WorkerMetrics()
        let second = WorkerMetrics()
        let r2 = first.upstreamSlot(named: "r2")
        first.retried(slot: r2, reason: .slowDown)
        first.retried(slot: r2, reason: .slowDown)
        first.retryRefused(slot: r2, .budget)
        first.retriedRequestEnded(slot: r2, succeeded: true)
        let otherR2 = second.upstreamSlot(named: "r2")
        second.retried(slot: otherR2, reason: .slowDown)
        second.retried(slot: second.upstreamSlot(named: "s3"), reason: .connect)
        second.retriedRequestEnded(slot: otherR2, succeeded: false)
        let clocks = UpstreamClocks()
        _ = clocks.clock(named: "r2").observe(upstreamDate: 2200, localNow: 1000)
        _ = clocks.clock(named: "s3")
        let text = MetricsText.renderRetries(workers: [first.snapshot(), second.snapshot()], clocks: clocks.all)
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("presignd_upstream_retries_total{upstream=\"r2\",reason=\"slow_down\"} 3"))
        #expect(lines.contains("presignd_upstream_retries_total{upstream=\"s3\",reason=\"connect\"} 1"))
        #expect(lines.contains("presignd_upstream_retry_outcomes_total{upstream=\"r2\",outcome=\"budget\"} 1"))
        #expect(
            lines.contains(
                "presignd_upstream_retry_outcomes_total{upstream=\"r2\",outcome=\"succeeded_after_retry\"} 1"))
        #expect(
            lines.contains("presignd_upstream_retry_outcomes_total{upstream=\"r2\",outcome=\"failed_after_retry\"} 1"))
        #expect(lines.contains("presignd_upstream_clock_offset_seconds{upstream=\"r2\"} 1200"))
        #expect(lines.contains("presignd_upstream_clock_offset_seconds{upstream=\"s3\"} 0"))
        #expect(lines.contains("# TYPE presignd_upstream_retries_total counter"))
        #expect(lines.contains("# TYPE presignd_upstream_clock_offset_seconds gauge"))
    }
}
