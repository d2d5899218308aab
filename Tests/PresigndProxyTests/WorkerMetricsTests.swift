import PresigndTestSupport
import Testing

@testable import PresigndProxy

/// The slot bookkeeping behind the per-request metrics gives the same counts a dictionary would.
struct WorkerMetricsTests {
    @Test func requestAndPrincipalCountsMatchADictionaryWhateverTheOrder() {
        let metrics = WorkerMetrics()
        var expected: [WorkerMetrics.RequestKey: Int] = [:]
        var expectedPrincipals: [String: Int] = [:]
        let principals = ["unix", "tcp", "token:ci"]
        let buckets = ["photos", "videos"]
        let methods = ["GET", "PUT", "HEAD"]
        let statuses = [200, 206, 404, 503, 0]
        var random = SplitMix(seed: 42)
        for _ in 0..<500 {
            let bucket = buckets.randomElement(using: &random)!
            let method = methods.randomElement(using: &random)!
            let status = statuses.randomElement(using: &random)!
            let principal = principals.randomElement(using: &random)!
            // Runs of the same key as well as alternation (the last-slot shortcut and the lookup both run).
            let repeats = Int.random(in: 1...3, using: &random)
            for _ in 0..<repeats {
                metrics.requestEnded(
                    bucket: bucket, method: method, status: status, bytesIn: 1, bytesOut: 2, durationMicros: 10,
                    principal: principal)
                expectedPrincipals[principal, default: 0] += 1
                let statusClass = status >= 100 && status < 600 ? "\(status / 100)xx" : "none"
                expected[
                    WorkerMetrics.RequestKey(bucket: bucket, method: method, statusClass: statusClass), default: 0] += 1
            }
        }
        #expect(metrics.snapshot().requests == expected)
        #expect(metrics.snapshot().principals == expectedPrincipals)
    }

    /// Bug c (issue 18): the `method` label was the method as the client sent it, so any client could create
    /// series without bound by sending made-up methods.
    @Test func countsMethodsOutsideTheFixedSetAsOther() {
        let metrics = WorkerMetrics()
        let known = ["GET", "HEAD", "PUT", "POST", "DELETE", "OPTIONS"]
        let invented = ["BREW", "PROPFIND", "get", "Delete", "PATCH", "CONNECT"] + (0..<100).map { "X\($0)" }
        for method in known + invented {
            metrics.requestEnded(
                bucket: "-", method: method, status: 400, bytesIn: 0, bytesOut: 0, durationMicros: 0,
                principal: "tcp", wasInFlight: false)
        }
        let requests = metrics.snapshot().requests
        #expect(Set(requests.keys.map(\.method)) == Set(known + ["other"]))
        #expect(requests[WorkerMetrics.RequestKey(bucket: "-", method: "other", statusClass: "4xx")] == invented.count)
        #expect(requests[WorkerMetrics.RequestKey(bucket: "-", method: "PUT", statusClass: "4xx")] == 1)
    }

    @Test func upstreamSlotsAreStableAndKeyedByName() {
        let metrics = WorkerMetrics()
        let r2 = metrics.upstreamSlot(named: "r2")
        let s3 = metrics.upstreamSlot(named: "s3")
        #expect(r2 != s3)
        #expect(metrics.upstreamSlot(named: "r2") == r2, "a reload resolving the same name gets the same slot")
        metrics.upstreamConnectionOpened(slot: r2)
        metrics.requestStarted()
        metrics.requestStarted()
        metrics.idleGauge(slot: s3).set(7)
        #expect(metrics.snapshot().inFlight == 2)
        metrics.requestEnded(
            bucket: "b", method: "GET", status: 200, bytesIn: 0, bytesOut: 0, durationMicros: 5, principal: "tcp",
            upstreamSlot: r2,
            upstreamLatencyMicros: 3, reusedConnections: 1)
        metrics.requestEnded(
            bucket: "b", method: "GET", status: 200, bytesIn: 0, bytesOut: 0, durationMicros: 5, principal: "tcp",
            upstreamSlot: s3,
            reusedConnections: 1)
        // A local answer was never in flight: it leaves the gauge alone.
        metrics.requestEnded(
            bucket: "-", method: "GET", status: 403, bytesIn: 0, bytesOut: 0, durationMicros: 0, principal: "tcp",
            wasInFlight: false)
        let snapshot = metrics.snapshot()
        #expect(snapshot.inFlight == 0)
        let upstreams = snapshot.upstreams
        #expect(upstreams["r2"]?.connectionsOpened == 1 && upstreams["r2"]?.connectionsReused == 1)
        #expect(upstreams["r2"]?.latency.count == 1)
        #expect(upstreams["s3"]?.connectionsReused == 1 && upstreams["s3"]?.idleConnections == 7)
        #expect(metrics.idleGauge(slot: s3) === metrics.idleGauge(slot: s3), "pools of one slot share its gauge")
    }
}
