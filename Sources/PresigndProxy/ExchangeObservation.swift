/// What an exchange records for the access log and the metrics (timings, upstream status, reuse),
/// kept apart from the proxying state in `Exchange`.
struct ExchangeObservation {
    let startedAtMicros = MonotonicClock.microseconds()
    /// The client's address (`127.0.0.1`, `::1`, `unix`).
    var client = "-"
    /// When the signed head was handed to the upstream connection (a new one still has to connect).
    var upstreamSentAtMicros: Int?
    /// The metrics slot of the upstream the exchange went to (`WorkerMetrics.upstreamSlot(named:)`).
    var upstreamSlot: Int?
    /// Head handed over → final response head received (like nginx's `$upstream_response_time`).
    var upstreamLatencyMicros: Int?
    var upstreamStatus: Int?
    var upstreamReused: Bool?
    /// The S3 error code presignd answered with, or `aborted` when the exchange was cut short.
    var errorCode: String?
    /// The signed head came from `SignedHeadCache` (an identical request in the same second).
    var reusedSignature = false

    mutating func upstreamAttached(slot: Int, reused: Bool) {
        upstreamSlot = slot
        upstreamSentAtMicros = MonotonicClock.microseconds()
        upstreamReused = reused
    }

    mutating func responseHeadArrived(status: Int) {
        upstreamStatus = status
        if let sent = upstreamSentAtMicros { upstreamLatencyMicros = MonotonicClock.microseconds() - sent }
    }
}
