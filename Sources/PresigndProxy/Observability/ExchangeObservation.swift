/// What an exchange records for the access log and the metrics (timings, upstream status, reuse),
/// kept apart from the proxying state in `Exchange`.
///
/// Times are the event loop's (`EventLoop.cachedMicroseconds`): when the loop iteration that saw the event woke
/// up, as nginx's `$request_time` is, not a clock read per event.
struct ExchangeObservation {
    let startedAtMicros: Int
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
    /// Pooled connections the exchange was sent on (a retry after a stale one makes two attachments).
    var reusedConnections = 0
    /// Upstream attempts made (issue 21 §3): the first, a fresh connection after a stale pooled one, and retries.
    var attempts = 0
    /// The S3 error code presignd answered with, the code of an `<Error>` the upstream sent in a `200 OK`
    /// (CompleteMultipartUpload, CopyObject), or `aborted` when the exchange was cut short.
    var errorCode: String?
    /// The S3 operation (`PutObject`) the policy classified, for the access log.
    var operation: String?
    /// Who asked (`uid:1000`, `addr:10.0.0.1`), for the access log.
    var principal: String?
    /// The principal's bounded metric label.
    var principalLabel = "unknown"
    /// A policy denial's rule, for the access log (issue 19 §7).
    var policyRule: String?

    init(startedAtMicros: Int) {
        self.startedAtMicros = startedAtMicros
    }

    mutating func upstreamAttached(slot: Int, reused: Bool, at now: Int) {
        upstreamSlot = slot
        upstreamSentAtMicros = now
        upstreamReused = reused
        attempts += 1
        if reused { reusedConnections += 1 }
    }

    mutating func responseHeadArrived(status: Int, at now: Int) {
        upstreamStatus = status
        // Never negative: the loop's wall-clock offset may step between two iterations.
        if let sent = upstreamSentAtMicros { upstreamLatencyMicros = max(0, now - sent) }
    }
}
