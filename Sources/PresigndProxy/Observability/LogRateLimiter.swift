/// At most one log line per interval for an event that can repeat fast (failed accepts at the descriptor limit),
/// each line with how often the event happened since the last one (issue 20). Pure: the time is a parameter.
struct LogRateLimiter {
    let intervalMilliseconds: Int
    private var lastLoggedAt: Int?
    private var unlogged = 0

    init(intervalMilliseconds: Int = 1000) {
        self.intervalMilliseconds = intervalMilliseconds
    }

    /// Counts one occurrence at `now` (milliseconds); returns the count a line logged now should carry, or nil
    /// while the interval since the last line runs.
    mutating func record(now: Int) -> Int? {
        unlogged += 1
        if let lastLoggedAt, now - lastLoggedAt < intervalMilliseconds { return nil }
        lastLoggedAt = now
        defer { unlogged = 0 }
        return unlogged
    }
}
