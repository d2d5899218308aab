import Synchronization

/// A worker's counters. Updated by the worker once per request, connection and upstream event (an
/// uncontended lock), read by the admin listener when `/metrics` is scraped.
final class WorkerMetrics: Sendable {
    /// Latency histogram bounds, microseconds (Prometheus `le`, shown in seconds).
    static let latencyBoundsMicros: [Int] = [
        1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000,
        10_000_000, 30_000_000, 60_000_000,
    ]

    struct RequestKey: Hashable, Sendable {
        var bucket: String
        var method: String
        var statusClass: String
    }

    /// Cumulative-on-render latency histogram: per-bound counts, sum and count.
    struct Histogram: Sendable {
        var buckets = [Int](repeating: 0, count: WorkerMetrics.latencyBoundsMicros.count + 1)
        var sumMicros = 0
        var count = 0

        mutating func observe(_ micros: Int) {
            let slot =
                WorkerMetrics.latencyBoundsMicros.firstIndex { micros <= $0 }
                ?? WorkerMetrics.latencyBoundsMicros.count
            buckets[slot] += 1
            sumMicros += micros
            count += 1
        }

        mutating func add(_ other: Histogram) {
            for index in buckets.indices { buckets[index] += other.buckets[index] }
            sumMicros += other.sumMicros
            count += other.count
        }
    }

    /// Per-upstream connection counters (keyed by the upstream's configured name).
    struct UpstreamCounters: Sendable {
        var idleConnections = 0
        var connectionsOpened = 0
        var connectionsReused = 0
        var tlsHandshakes = 0
        var tlsSessionReuses = 0
        var latency = Histogram()

        mutating func add(_ other: UpstreamCounters) {
            idleConnections += other.idleConnections
            connectionsOpened += other.connectionsOpened
            connectionsReused += other.connectionsReused
            tlsHandshakes += other.tlsHandshakes
            tlsSessionReuses += other.tlsSessionReuses
            latency.add(other.latency)
        }
    }

    struct Counters: Sendable {
        var requests: [RequestKey: Int] = [:]
        var bytesIn = 0
        var bytesOut = 0
        var inFlight = 0
        var openConnections = 0
        var totalConnections = 0
        var duration = Histogram()
        var signingFailures = 0
        /// Requests refused by presignd's policy or limits, by S3 error code.
        var denials: [String: Int] = [:]

        // Presigned links (issue 7): 307 redirects served, by bucket.
        var redirects: [String: Int] = [:]
        var upstreams: [String: UpstreamCounters] = [:]
    }

    private let counters = Mutex(Counters())

    func snapshot() -> Counters { counters.withLock { $0 } }

    func connectionOpened() {
        counters.withLock {
            $0.openConnections += 1
            $0.totalConnections += 1
        }
    }

    func connectionClosed() {
        counters.withLock { $0.openConnections -= 1 }
    }

    func signingFailed() {
        counters.withLock { $0.signingFailures += 1 }
    }

    /// A request refused by policy (403) or a limit (413, 431, 414, 408).
    func denied(code: String) {
        counters.withLock { $0.denials[code, default: 0] += 1 }
    }

    func requestStarted() {
        counters.withLock { $0.inFlight += 1 }
    }

    /// A request ended. `wasInFlight` is false for requests answered locally before an exchange began.
    private static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx"]

    func requestEnded(
        bucket: String, method: String, status: Int, bytesIn: Int, bytesOut: Int, durationMicros: Int,
        wasInFlight: Bool = true, upstream: String? = nil, upstreamLatencyMicros: Int? = nil
    ) {
        let statusClass = status >= 100 && status < 600 ? Self.statusClasses[status / 100 - 1] : "none"
        let key = RequestKey(bucket: bucket, method: method, statusClass: statusClass)
        counters.withLock {
            if wasInFlight { $0.inFlight -= 1 }
            $0.requests[key, default: 0] += 1
            $0.bytesIn += bytesIn
            $0.bytesOut += bytesOut
            $0.duration.observe(durationMicros)
            if let upstream, let upstreamLatencyMicros {
                $0.upstreams[upstream, default: UpstreamCounters()].latency.observe(upstreamLatencyMicros)
            }
        }
    }

    // MARK: Presigned links (issue 7)

    func redirectServed(bucket: String) {
        counters.withLock { $0.redirects[bucket, default: 0] += 1 }
    }

    /// An exchange got an upstream connection: a pooled one (`reused`) or a new one.
    func upstreamAttached(upstream: String, reused: Bool) {
        counters.withLock {
            if reused {
                $0.upstreams[upstream, default: UpstreamCounters()].connectionsReused += 1
            } else {
                $0.upstreams[upstream, default: UpstreamCounters()].connectionsOpened += 1
            }
        }
    }

    /// A TLS handshake to an upstream finished; `resumed` when it resumed a cached session.
    func tlsHandshake(upstream: String, resumed: Bool) {
        counters.withLock {
            $0.upstreams[upstream, default: UpstreamCounters()].tlsHandshakes += 1
            if resumed { $0.upstreams[upstream, default: UpstreamCounters()].tlsSessionReuses += 1 }
        }
    }

    /// The worker's pool for `upstream` now holds `count` idle connections.
    func poolIdle(upstream: String, count: Int) {
        counters.withLock { $0.upstreams[upstream, default: UpstreamCounters()].idleConnections = count }
    }
}
