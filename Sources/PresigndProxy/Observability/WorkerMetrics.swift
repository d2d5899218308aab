import PresigndSync
import Synchronization

/// A worker's counters. Updated by the worker (an uncontended lock once per request, connection and new upstream
/// connection; the in-flight count and the pools' idle counts are atomics only the worker stores), read by the
/// admin listener when `/metrics` is scraped.
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
        /// Retries by `RetryReason`, and retried or not-retried requests by outcome (issue 21 §3).
        var retries: [String: Int] = [:]
        var retryOutcomes: [String: Int] = [:]

        mutating func add(_ other: UpstreamCounters) {
            retries.merge(other.retries, uniquingKeysWith: +)
            retryOutcomes.merge(other.retryOutcomes, uniquingKeysWith: +)
            idleConnections += other.idleConnections
            connectionsOpened += other.connectionsOpened
            connectionsReused += other.connectionsReused
            tlsHandshakes += other.tlsHandshakes
            tlsSessionReuses += other.tlsSessionReuses
            latency.add(other.latency)
        }
    }

    struct Counters: Sendable {
        var bytesIn = 0
        var bytesOut = 0
        /// Requests in flight: filled in by `snapshot` (requests started minus `endedInFlight`).
        var inFlight = 0
        /// Requests that had been counted as started and have ended.
        var endedInFlight = 0
        var openConnections = 0
        var totalConnections = 0
        var duration = Histogram()
        var signingFailures = 0
        /// Requests refused by presignd's policy or limits, by S3 error code.
        var denials: [String: Int] = [:]
        /// Policy denials by operation and reason (issue 19 §7): both labels come from closed sets.
        var policyDenials: [PolicyDenialKey: Int] = [:]
        /// Requests by principal label (`unix`, `tcp`, `unknown`, `token:NAME`): bounded by the configuration.
        var principalCounter = SlotCounter<String>()
        var principals: [String: Int] { principalCounter.totals }

        // Presigned links (issue 7): 307 redirects served, by bucket.
        var redirects: [String: Int] = [:]

        /// Per-upstream counters in slots (`upstreamSlot(named:)`): the hot path indexes an array
        /// instead of hashing a name.
        var upstreamNames: [String] = []
        var upstreamSlots: [UpstreamCounters] = []
        /// Per slot: its idle-connection gauge (`snapshot` copies the values into `upstreamSlots`).
        var idleGauges: [IdleGauge] = []

        var upstreams: [String: UpstreamCounters] {
            var result: [String: UpstreamCounters] = [:]
            for (name, counters) in zip(upstreamNames, upstreamSlots) { result[name, default: .init()].add(counters) }
            return result
        }

        /// Request counts by bucket, method and status class.
        var requestCounter = SlotCounter<RequestKey>()
        var requests: [RequestKey: Int] { requestCounter.totals }

        mutating func slot(named name: String) -> Int {
            if let slot = upstreamNames.firstIndex(of: name) { return slot }
            upstreamNames.append(name)
            upstreamSlots.append(UpstreamCounters())
            idleGauges.append(IdleGauge())
            return upstreamNames.count - 1
        }
    }

    private let counters = Locked(Counters())
    /// Accept pauses, shed connections and requests, slow bodies (issue 20).
    let limits = LimitCounters()
    /// Requests started. Only the worker writes it, so an increment is a load and a store (no locked
    /// instruction, no lock); `snapshot` reads it after the counters, so it never sees fewer starts than ends.
    private let started = Atomic<Int>(0)

    func snapshot() -> Counters {
        var copy = counters.withLock { $0 }
        copy.inFlight = max(0, started.load(ordering: .acquiring) - copy.endedInFlight)
        for slot in copy.upstreamSlots.indices {
            copy.upstreamSlots[slot].idleConnections = copy.idleGauges[slot].value
        }
        return copy
    }

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

    /// A request the policy engine refused. `operation` is an `S3Operation` name or "unknown"; `reason` a
    /// `PolicyDenial.Reason`: bounded labels.
    func policyDenied(operation: String, reason: String) {
        counters.withLock { $0.policyDenials[PolicyDenialKey(operation: operation, reason: reason), default: 0] += 1 }
    }

    struct PolicyDenialKey: Hashable, Sendable {
        var operation: String
        var reason: String
    }

    /// Called by the owning worker only (see `started`).
    func requestStarted() {
        started.store(started.load(ordering: .relaxed) + 1, ordering: .releasing)
    }

    private static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx"]

    /// The `method` label: one of the methods S3 clients use, or "other". The client chooses the method, so
    /// taking it as sent would let any client add series without bound (bug c). Methods are case-sensitive
    /// (RFC 9110 §9.1): `get` is "other".
    static func methodLabel(_ method: String) -> String {
        switch method {
        case "GET": "GET"
        case "HEAD": "HEAD"
        case "PUT": "PUT"
        case "POST": "POST"
        case "DELETE": "DELETE"
        case "OPTIONS": "OPTIONS"
        default: "other"
        }
    }

    /// A request ended. `wasInFlight` is false for requests answered locally before an exchange began.
    func requestEnded(
        bucket: String, method: String, status: Int, bytesIn: Int, bytesOut: Int, durationMicros: Int,
        principal: String, wasInFlight: Bool = true, upstreamSlot: Int? = nil, upstreamLatencyMicros: Int? = nil,
        reusedConnections: Int = 0
    ) {
        let statusClass = status >= 100 && status < 600 ? Self.statusClasses[status / 100 - 1] : "none"
        let key = RequestKey(bucket: bucket, method: Self.methodLabel(method), statusClass: statusClass)
        counters.withLock {
            if wasInFlight { $0.endedInFlight += 1 }
            $0.requestCounter.count(key)
            $0.principalCounter.count(principal)
            $0.bytesIn += bytesIn
            $0.bytesOut += bytesOut
            $0.duration.observe(durationMicros)
            if let upstreamSlot {
                if let upstreamLatencyMicros { $0.upstreamSlots[upstreamSlot].latency.observe(upstreamLatencyMicros) }
                $0.upstreamSlots[upstreamSlot].connectionsReused += reusedConnections
            }
        }
    }

    // MARK: Presigned links (issue 7)

    func redirectServed(bucket: String) {
        counters.withLock { $0.redirects[bucket, default: 0] += 1 }
    }

    /// An exchange got an upstream connection: a pooled one (`reused`) or a new one.
    /// The slot of an upstream's counters (resolved once per worker and configuration, not per request).
    func upstreamSlot(named name: String) -> Int {
        counters.withLock { $0.slot(named: name) }
    }

    /// A new upstream connection was opened for a request. (A pooled one is counted when the request ends:
    /// `requestEnded(reusedConnections:)`, in the lock that request takes anyway.)
    func upstreamConnectionOpened(slot: Int) {
        counters.withLock { $0.upstreamSlots[slot].connectionsOpened += 1 }
    }

    func tlsHandshake(slot: Int, resumed: Bool) {
        counters.withLock {
            $0.upstreamSlots[slot].tlsHandshakes += 1
            if resumed { $0.upstreamSlots[slot].tlsSessionReuses += 1 }
        }
    }

    // MARK: Retries (issue 21 §3)

    func retried(slot: Int, reason: RetryReason) {
        counters.withLock { $0.upstreamSlots[slot].retries[reason.rawValue, default: 0] += 1 }
    }

    /// A retryable outcome the policy did not retry, and why.
    func retryRefused(slot: Int, _ refusal: RetryRefusal) {
        counters.withLock { $0.upstreamSlots[slot].retryOutcomes[refusal.rawValue, default: 0] += 1 }
    }

    /// A request that took more than one attempt ended.
    func retriedRequestEnded(slot: Int, succeeded: Bool) {
        let outcome = succeeded ? "succeeded_after_retry" : "failed_after_retry"
        counters.withLock { $0.upstreamSlots[slot].retryOutcomes[outcome, default: 0] += 1 }
    }

    /// The gauge an upstream pool stores its idle count in (one per slot, shared by the slot's pools).
    func idleGauge(slot: Int) -> IdleGauge {
        counters.withLock { $0.idleGauges[slot] }
    }
}

/// A gauge one thread stores and others read (`/metrics`): a plain store and load, no lock.
final class IdleGauge: Sendable {
    private let storage = Atomic<Int>(0)

    var value: Int { storage.load(ordering: .relaxed) }

    func set(_ value: Int) {
        storage.store(value, ordering: .relaxed)
    }
}
