/// `min_body_rate` for one exchange (issue 20): the bytes a body moved per window, like Apache's mod_reqtimeout
/// `minrate`. Windows follow each other; a body that moved less than `rate × window` in a whole window is too slow.
/// Pure: bytes and time are parameters (the worker samples every connection twice a second).
struct BodyRateMeter: Equatable {
    private var body: MeasuredBody?
    private var windowStart = 0
    private var bytesAtWindowStart = 0

    /// Samples `bytes` (the measured body's count so far) at `now` (milliseconds). True when the window that just
    /// closed fell short of `bytesPerSecond`. A change of body, or `restart`, begins a new window.
    mutating func isTooSlow(
        _ measured: MeasuredBody, bytes: Int, now: Int, bytesPerSecond: Int, windowMilliseconds: Int
    ) -> Bool {
        guard bytesPerSecond > 0, measured == body else {
            start(measured, bytes: bytes, now: now)
            return false
        }
        let elapsed = now - windowStart
        guard elapsed >= windowMilliseconds else { return false }
        let moved = bytes - bytesAtWindowStart
        if moved.multipliedReportingOverflow(by: 1000).partialValue < bytesPerSecond * elapsed { return true }
        start(measured, bytes: bytes, now: now)
        return false
    }

    /// Nothing is measured for a while (the body waits for the other side: backpressure); the next sample starts
    /// a new window.
    mutating func restart() {
        body = nil
    }

    private mutating func start(_ measured: MeasuredBody, bytes: Int, now: Int) {
        body = measured
        windowStart = now
        bytesAtWindowStart = bytes
    }
}
