import Synchronization

/// A worker's counters. Updated by the worker once per request and connection (an uncontended
/// lock), read by the admin listener when `/metrics` is scraped.
final class WorkerMetrics: Sendable {
    /// Request-duration histogram bounds, milliseconds (Prometheus `le`).
    static let durationBounds: [Int] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000]

    struct RequestKey: Hashable, Sendable {
        var bucket: String
        var method: String
        var statusClass: String
    }

    struct Counters: Sendable {
        var requests: [RequestKey: Int] = [:]
        var bytesIn = 0
        var bytesOut = 0
        var inFlight = 0
        var openConnections = 0
        var totalConnections = 0
        var durationBuckets = [Int](repeating: 0, count: WorkerMetrics.durationBounds.count + 1)
        var durationSumMs = 0
        var durationCount = 0
        var signingFailures = 0

        // Presigned links (issue 7): 307 redirects served, by bucket.
        var redirects: [String: Int] = [:]
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

    func requestStarted() {
        counters.withLock { $0.inFlight += 1 }
    }

    func requestEnded(bucket: String, method: String, status: Int, bytesIn: Int, bytesOut: Int, durationMs: Int) {
        let statusClass = status == 0 ? "none" : "\(status / 100)xx"
        let key = RequestKey(bucket: bucket, method: method, statusClass: statusClass)
        let slot = Self.durationBounds.firstIndex { durationMs <= $0 } ?? Self.durationBounds.count
        counters.withLock {
            $0.inFlight -= 1
            $0.requests[key, default: 0] += 1
            $0.bytesIn += bytesIn
            $0.bytesOut += bytesOut
            $0.durationBuckets[slot] += 1
            $0.durationSumMs += durationMs
            $0.durationCount += 1
        }
    }

    // MARK: Presigned links (issue 7)

    func redirectServed(bucket: String) {
        counters.withLock { $0.redirects[bucket, default: 0] += 1 }
    }
}
