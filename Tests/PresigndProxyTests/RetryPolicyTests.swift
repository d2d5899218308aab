import Testing

@testable import PresigndProxy

/// `RetryPolicy` and `RetryBudget` (issue 21 §3): pure decisions, randomness injected.
@Suite struct RetryPolicyTests {
    static let policy = RetryPolicy(maxAttempts: 3, baseDelayMilliseconds: 100, maxDelayMilliseconds: 1000)

    static func decide(
        attempt: Int = 1, _ outcome: AttemptOutcome, request: RetryableRequest = .replayable, retryAfter: Int? = nil,
        budget: inout RetryBudget, random: Double = 1, policy: RetryPolicy = policy
    ) -> RetryDecision {
        policy.decide(
            attempt: attempt, outcome: outcome, request: request, retryAfterMilliseconds: retryAfter,
            budget: &budget, jitter: random)
    }

    @Test(arguments: [
        (AttemptOutcome.connectFailed, RetryReason.connect), (.resetBeforeHead, .reset),
        (.answered(status: 500, code: nil), .serverError), (.answered(status: 502, code: nil), .serverError),
        (.answered(status: 503, code: nil), .serverError), (.answered(status: 504, code: nil), .serverError),
        (.answered(status: 429, code: nil), .throttled), (.answered(status: 503, code: "SlowDown"), .slowDown),
        (.answered(status: 500, code: "InternalError"), .internalError),
        (.answered(status: 200, code: "InternalError"), .internalError),
        (.answered(status: 200, code: "SlowDown"), .slowDown),
        (.answered(status: 200, code: "ServiceUnavailable"), .serverError),
    ])
    func retriesTheOutcomesTheIssueNames(outcome: AttemptOutcome, reason: RetryReason) {
        var budget = RetryBudget(retries: 10)
        guard case .retry(_, let got) = Self.decide(outcome, budget: &budget) else {
            Issue.record("not retried")
            return
        }
        #expect(got == reason)
    }

    @Test(arguments: [400, 403, 404, 409, 412, 501])
    func passesOtherAnswersOn(status: Int) {
        var budget = RetryBudget(retries: 10)
        #expect(Self.decide(.answered(status: status, code: nil), budget: &budget) == .giveUp(nil))
        #expect(budget.tokens == budget.capacity)
    }

    @Test(arguments: [nil, "NoSuchUpload", "AccessDenied", "InvalidPart", "NoSuchKey"])
    func passesASuccessStatusWithAFinalErrorCodeOn(code: String?) {
        var budget = RetryBudget(retries: 10)
        #expect(Self.decide(.answered(status: 200, code: code), budget: &budget) == .giveUp(nil))
        #expect(budget.tokens == budget.capacity)
    }

    @Test func stopsAtMaxAttempts() {
        var budget = RetryBudget(retries: 10)
        if case .retry = Self.decide(attempt: 2, .connectFailed, budget: &budget) {} else { Issue.record("2nd") }
        #expect(Self.decide(attempt: 3, .connectFailed, budget: &budget) == .giveUp(.maxAttempts))
    }

    @Test func neverResendsABodyThatLeft() {
        var budget = RetryBudget(retries: 10)
        #expect(
            Self.decide(.answered(status: 503, code: nil), request: .bodySent, budget: &budget) == .giveUp(.bodySent))
        #expect(budget.tokens == budget.capacity)
    }

    @Test func resendsAPostOnlyWhenTheUpstreamDidNothing() {
        var budget = RetryBudget(retries: 10)
        #expect(Self.decide(.resetBeforeHead, request: .notIdempotent, budget: &budget) == .giveUp(.bodySent))
        if case .retry = Self.decide(.connectFailed, request: .notIdempotent, budget: &budget) {
        } else {
            Issue.record("connect")
        }
        if case .retry = Self.decide(.answered(status: 503, code: nil), request: .notIdempotent, budget: &budget) {
        } else {
            Issue.record("503")
        }
    }

    @Test func backoffIsFullJitterUnderADoublingCeiling() {
        #expect(Self.policy.backoffCeiling(retry: 1) == 100)
        #expect(Self.policy.backoffCeiling(retry: 2) == 200)
        #expect(Self.policy.backoffCeiling(retry: 3) == 400)
        #expect(Self.policy.backoffCeiling(retry: 5) == 1000)
        #expect(Self.policy.backoffCeiling(retry: 60) == 1000)
        var budget = RetryBudget(retries: 10)
        // The lowest and highest draws: 0 and the ceiling.
        #expect(
            Self.decide(attempt: 2, .connectFailed, budget: &budget, random: 0)
                == .retry(afterMilliseconds: 0, reason: .connect))
        #expect(
            Self.decide(attempt: 2, .connectFailed, budget: &budget, random: 1)
                == .retry(afterMilliseconds: 200, reason: .connect))
        #expect(
            Self.decide(attempt: 2, .connectFailed, budget: &budget, random: 0.5)
                == .retry(afterMilliseconds: 100, reason: .connect))
    }

    @Test func honoursRetryAfterWithinTheBound() {
        var budget = RetryBudget(retries: 10)
        #expect(
            Self.decide(.answered(status: 429, code: nil), retryAfter: 800, budget: &budget, random: 0)
                == .retry(afterMilliseconds: 800, reason: .throttled))
        // A longer jittered backoff still wins over a short Retry-After.
        #expect(
            Self.decide(.answered(status: 429, code: nil), retryAfter: 10, budget: &budget, random: 1)
                == .retry(afterMilliseconds: 100, reason: .throttled))
        let before = budget.tokens
        #expect(
            Self.decide(.answered(status: 503, code: nil), retryAfter: 1001, budget: &budget) == .giveUp(.retryAfter))
        #expect(budget.tokens == before)
    }

    @Test func readsRetryAfterSecondsAndDates() {
        #expect(RetryPolicy.retryAfterMilliseconds("1", upstreamDate: nil, now: 0) == 1000)
        #expect(RetryPolicy.retryAfterMilliseconds("0", upstreamDate: nil, now: 0) == 0)
        #expect(RetryPolicy.retryAfterMilliseconds("99999999999", upstreamDate: nil, now: 0) == Int.max)
        // An HTTP date counts from the upstream's own Date, so a skewed local clock does not stretch it.
        let date = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(
            RetryPolicy.retryAfterMilliseconds("Sun, 06 Nov 1994 08:49:40 GMT", upstreamDate: date, now: 0) == 3000)
        #expect(
            RetryPolicy.retryAfterMilliseconds("Sun, 06 Nov 1994 08:49:40 GMT", upstreamDate: nil, now: date + 1)
                == 2000)
        #expect(RetryPolicy.retryAfterMilliseconds("Sun, 06 Nov 1994 08:49:30 GMT", upstreamDate: date, now: 0) == 0)
        #expect(RetryPolicy.retryAfterMilliseconds("soon", upstreamDate: nil, now: 0) == nil)
        #expect(RetryPolicy.retryAfterMilliseconds("-1", upstreamDate: nil, now: 0) == nil)
    }

    @Test func anEmptyBudgetStopsRetries() {
        var budget = RetryBudget(retries: 2)
        for _ in 0..<2 {
            if case .retry = Self.decide(.answered(status: 503, code: nil), budget: &budget) {
            } else {
                Issue.record("within the budget")
            }
        }
        #expect(Self.decide(.answered(status: 503, code: nil), budget: &budget) == .giveUp(.budget))
        // Successes refill it: five first-attempt successes pay for one retry.
        for _ in 0..<4 { budget.succeeded(afterRetries: 0) }
        #expect(Self.decide(.answered(status: 503, code: nil), budget: &budget) == .giveUp(.budget))
        budget.succeeded(afterRetries: 0)
        if case .retry = Self.decide(.answered(status: 503, code: nil), budget: &budget) {
        } else {
            Issue.record("refilled")
        }
    }

    @Test func aRetriedSuccessRepaysItsRetriesUpToTheCapacity() {
        var budget = RetryBudget(retries: 3)
        _ = budget.withdraw()
        _ = budget.withdraw()
        budget.succeeded(afterRetries: 2)
        #expect(budget.tokens == budget.capacity)
        budget.succeeded(afterRetries: 1)
        #expect(budget.tokens == budget.capacity)
    }

    @Test func aZeroBudgetTurnsRetriesOff() {
        var budget = RetryBudget(retries: 0)
        #expect(Self.decide(.connectFailed, budget: &budget) == .giveUp(.budget))
    }

    @Test func oneAttemptMeansNoRetries() {
        var budget = RetryBudget(retries: 10)
        let policy = RetryPolicy(maxAttempts: 1, baseDelayMilliseconds: 100, maxDelayMilliseconds: 1000)
        #expect(Self.decide(.connectFailed, budget: &budget, policy: policy) == .giveUp(.maxAttempts))
    }
}
