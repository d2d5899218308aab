import PresigndSigV4

/// When to refresh and retry, with its defaults.
struct CredentialRefreshPolicy: Sendable, Equatable {
    /// Refresh at least this long before expiry. Default 5 minutes (the AWS SDKs refresh 5–15 minutes ahead).
    var leadMilliseconds = 5 * 60_000
    /// Plus up to this much more, jittered, so many instances do not refresh together. Default 10 minutes.
    var leadJitterMilliseconds = 10 * 60_000
    /// The first retry after a failed fetch. Default 1 s; doubles per failure.
    var retryInitialMilliseconds = 1_000
    /// The longest pause between retries. Default 30 s.
    var retryMaximumMilliseconds = 30_000
}

/// What the refresher does next.
enum CredentialRefreshAction: Sendable {
    /// Start one fetch (never two at once: the machine is single-flight).
    case fetch
    /// New credentials: hand them to every worker.
    case publish(FetchedCredentials)
    /// No valid credentials: workers answer 503 with `reason`, `/readyz` fails.
    case unavailable(reason: String)
    /// Call `timerFired` at this wall-clock time (epoch milliseconds), replacing any earlier schedule.
    case schedule(atMilliseconds: Int)
}

/// One upstream's credential refresh as a pure state machine: time and jitter (0..<1) are parameters, so tests
/// drive it without clocks or sleeps.
///
/// Fetches start at `start`, at the scheduled refresh time (ahead of expiry by `lead`, at most half the
/// lifetime), and on retries with exponential back-off. A failed fetch keeps still-valid credentials; the retry is
/// never scheduled past their expiry, so their end is noticed on time and reported as `unavailable`.
struct CredentialRefreshStateMachine {
    let policy: CredentialRefreshPolicy
    /// The credentials last published.
    private(set) var current: FetchedCredentials?
    private(set) var isFetching = false
    /// Failed fetches since the last good one.
    private(set) var consecutiveFailures = 0
    private(set) var lastError: String?

    init(policy: CredentialRefreshPolicy = CredentialRefreshPolicy()) {
        self.policy = policy
    }

    /// Whether the current credentials can sign at `now`.
    func isValid(atMilliseconds now: Int) -> Bool {
        guard let current else { return false }
        return current.expiresAtMilliseconds.map { now < $0 } ?? true
    }

    mutating func start() -> [CredentialRefreshAction] {
        guard !isFetching else { return [] }
        isFetching = true
        return [.fetch]
    }

    /// The scheduled time came: refresh (or retry), and report credentials that have just expired.
    mutating func timerFired(nowMilliseconds now: Int) -> [CredentialRefreshAction] {
        var actions: [CredentialRefreshAction] = []
        if current != nil && !isValid(atMilliseconds: now) {
            actions.append(.unavailable(reason: expiredReason()))
        }
        if !isFetching {
            isFetching = true
            actions.append(.fetch)
        }
        return actions
    }

    mutating func fetchSucceeded(
        _ fetched: FetchedCredentials, nowMilliseconds now: Int, jitter: Double
    ) -> [CredentialRefreshAction] {
        if let expiry = fetched.expiresAtMilliseconds, expiry <= now {
            return fetchFailed(
                "the provider delivered credentials that had already expired (\(Self.iso(expiry)))",
                nowMilliseconds: now, jitter: jitter)
        }
        isFetching = false
        consecutiveFailures = 0
        lastError = nil
        current = fetched
        guard let expiry = fetched.expiresAtMilliseconds else { return [.publish(fetched)] }
        return [.publish(fetched), .schedule(atMilliseconds: refreshTime(now: now, expiry: expiry, jitter: jitter))]
    }

    mutating func fetchFailed(_ reason: String, nowMilliseconds now: Int, jitter: Double) -> [CredentialRefreshAction] {
        isFetching = false
        consecutiveFailures += 1
        lastError = reason
        var actions: [CredentialRefreshAction] = []
        var retryAt = now + retryDelay(jitter: jitter)
        if isValid(atMilliseconds: now) {
            // Keep them; look again no later than their expiry.
            if let expiry = current?.expiresAtMilliseconds { retryAt = min(retryAt, expiry) }
        } else {
            actions.append(
                .unavailable(reason: current == nil ? "fetching credentials failed: \(reason)" : expiredReason()))
        }
        actions.append(.schedule(atMilliseconds: retryAt))
        return actions
    }

    /// `expiry - lead`, where lead is `leadMilliseconds` plus jitter, but at most half the lifetime left (short-lived
    /// credentials are refreshed halfway).
    func refreshTime(now: Int, expiry: Int, jitter: Double) -> Int {
        let lead = policy.leadMilliseconds + Int(Double(policy.leadJitterMilliseconds) * Self.clamp(jitter))
        return expiry - min(lead, (expiry - now) / 2)
    }

    /// Exponential back-off with equal jitter: half the step fixed, half random.
    func retryDelay(jitter: Double) -> Int {
        let exponent = min(max(consecutiveFailures - 1, 0), 20)
        let step = min(policy.retryInitialMilliseconds << exponent, policy.retryMaximumMilliseconds)
        return step / 2 + Int(Double(step / 2) * Self.clamp(jitter))
    }

    private func expiredReason() -> String {
        let when = current?.expiresAtMilliseconds.map { " at \(Self.iso($0))" } ?? ""
        let why = lastError.map { "; the last refresh failed: \($0)" } ?? "; a refresh is under way"
        return "the credentials expired\(when)\(why)"
    }

    private static func clamp(_ jitter: Double) -> Double { min(max(jitter, 0), 0.999_999) }

    static func iso(_ milliseconds: Int) -> String {
        AmzDate(epochSeconds: milliseconds / 1000).iso8601
    }
}
