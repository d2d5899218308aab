import PresigndSigV4

/// When a request goes to its upstream again (issue 21 §3): which outcomes are worth another attempt, how long to
/// wait first (exponential backoff with full jitter, `Retry-After` honoured up to a bound) and when to stop. Pure:
/// the random draw comes in as a parameter, the budget as a value, and the answer is a `RetryDecision`.
struct RetryPolicy: Equatable, Sendable {
    /// Attempts per request, the first included (`max_attempts`; 1: no retries).
    var maxAttempts = 3
    /// The backoff before retry n (n ≥ 1) is drawn from 0...min(maxDelay, baseDelay × 2^(n-1)) (`retry_base_delay`).
    var baseDelayMilliseconds = 100
    /// The longest wait before one retry, and the longest `Retry-After` honoured: an upstream asking for more gets
    /// its answer passed to the client, whose SDK waits itself (`retry_max_delay`).
    var maxDelayMilliseconds = 5_000

    /// What the policy makes of a failed attempt. `attempt` is the number of the attempt that failed (1 for the
    /// first); `retryAfterMilliseconds` is the upstream's `Retry-After`, when it sent one; `jitter` is the random
    /// draw in 0...1 that places the backoff between 0 and its ceiling (full jitter), passed in so tests choose it.
    func decide(
        attempt: Int, outcome: AttemptOutcome, request: RetryableRequest, retryAfterMilliseconds: Int? = nil,
        budget: inout RetryBudget, jitter: Double
    ) -> RetryDecision {
        guard let reason = outcome.retryReason else { return .giveUp(nil) }
        switch request {
        case .replayable: break
        case .bodySent: return .giveUp(.bodySent)
        case .notIdempotent where outcome == .resetBeforeHead: return .giveUp(.bodySent)
        case .notIdempotent: break
        }
        guard attempt < maxAttempts else { return .giveUp(.maxAttempts) }
        if let retryAfterMilliseconds, retryAfterMilliseconds > maxDelayMilliseconds { return .giveUp(.retryAfter) }
        guard budget.withdraw() else { return .giveUp(.budget) }
        var delay = Int((Double(backoffCeiling(retry: attempt)) * min(1, max(0, jitter))).rounded(.down))
        if let retryAfterMilliseconds { delay = max(delay, retryAfterMilliseconds) }
        return .retry(afterMilliseconds: delay, reason: reason)
    }

    /// The full-jitter ceiling before retry `retry`: base × 2^(retry-1), at most `maxDelayMilliseconds`.
    func backoffCeiling(retry: Int) -> Int {
        var ceiling = max(0, baseDelayMilliseconds)
        for _ in 1..<max(1, retry) {
            if ceiling >= maxDelayMilliseconds { break }
            ceiling *= 2
        }
        return min(ceiling, maxDelayMilliseconds)
    }

    /// `Retry-After` in milliseconds: delay-seconds, or an HTTP date taken relative to the upstream's own `Date`
    /// (so a skewed clock does not stretch it) or else to `now` (RFC 9110 §10.2.3). Nil when unreadable.
    static func retryAfterMilliseconds(_ value: String, upstreamDate: Int?, now: Int) -> Int? {
        if !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard value.utf8.count <= 9, let seconds = Int(value) else { return Int.max }
            return seconds * 1000
        }
        guard let date = AmzDate(httpDate: value)?.epochSeconds else { return nil }
        return max(0, date - (upstreamDate ?? now)) * 1000
    }
}

/// How an attempt failed, as far as retrying is concerned.
enum AttemptOutcome: Equatable, Sendable {
    /// Name resolution, TCP or TLS failed: nothing reached the upstream.
    case connectFailed
    /// The connection failed after the request went out, before any byte of a response.
    case resetBeforeHead
    /// A whole answer arrived with this status; `code` is the S3 error code of its XML body, when read.
    case answered(status: Int, code: String?)

    /// Why this outcome is retried (the metric's `reason`), or nil when it is final.
    var retryReason: RetryReason? {
        switch self {
        case .connectFailed: return .connect
        case .resetBeforeHead: return .reset
        case .answered(let status, let code):
            switch code {
            case "SlowDown": return .slowDown
            case "InternalError": return .internalError
            // The code of a 503, and what S3 puts in a 200's `<Error>` body when it was busy.
            case "ServiceUnavailable": return .serverError
            default: break
            }
            switch status {
            case 429: return .throttled
            case 500, 502, 503, 504: return .serverError
            default: return nil
            }
        }
    }
}

/// Whether the request can be sent again.
enum RetryableRequest: Equatable, Sendable {
    /// No body, a body held whole (in memory or spooled), or none of it sent yet.
    case replayable
    /// Replayable, but not idempotent (POST): sent again only when the upstream said it did nothing (an error
    /// answer, a failed connect), never after a reset that may have come after the upstream acted on it.
    case notIdempotent
    /// Part of a streamed body has left and is not kept: the client's SDK retries it.
    case bodySent
}

/// Why an attempt is retried: the `reason` label of `presignd_upstream_retries_total`.
enum RetryReason: String, CaseIterable, Sendable {
    case connect
    case reset
    case throttled
    case serverError = "server_error"
    case slowDown = "slow_down"
    case internalError = "internal_error"
    case clockSkew = "clock_skew"
}

/// Why a retryable outcome was not retried: the `outcome` label of `presignd_upstream_retry_outcomes_total`.
enum RetryRefusal: String, CaseIterable, Sendable {
    case maxAttempts = "max_attempts"
    case budget
    case bodySent = "body_sent"
    case retryAfter = "retry_after_too_long"
}

enum RetryDecision: Equatable, Sendable {
    case retry(afterMilliseconds: Int, reason: RetryReason)
    /// Answer the client with what the attempt got; `refusal` says why a retryable outcome was not retried (nil:
    /// the outcome is final).
    case giveUp(RetryRefusal?)
}

/// A worker's allowance for retries, so a failing upstream does not get a retry storm (issue 21 §3): a token
/// bucket in the manner of the AWS SDKs' standard retry mode. A retry costs `retryCost` tokens; a request that
/// succeeds at its first attempt puts one back, one that succeeded after retries puts back what they cost. While
/// every request fails nothing comes back, and once the bucket is empty requests get one attempt each.
struct RetryBudget: Equatable, Sendable {
    static let retryCost = 5
    /// Tokens when full: `retry_budget` retries' worth.
    let capacity: Int
    private(set) var tokens: Int

    /// A full bucket for `retries` retries in a row (`retry_budget`; 0 turns retries off).
    init(retries: Int) {
        capacity = max(0, retries) * Self.retryCost
        tokens = capacity
    }

    /// Takes one retry's tokens; false (and nothing taken) when there are not enough.
    mutating func withdraw() -> Bool {
        guard tokens >= Self.retryCost else { return false }
        tokens -= Self.retryCost
        return true
    }

    /// A request succeeded after `retries` retries.
    mutating func succeeded(afterRetries retries: Int) {
        tokens = min(capacity, tokens + (retries == 0 ? 1 : retries * Self.retryCost))
    }
}
