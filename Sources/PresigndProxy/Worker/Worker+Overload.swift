import PresigndIO

/// A worker at its limits (issue 20): connections over `max_connections` are answered and closed rather than left
/// in the backlog, failed accepts pause the listener and are logged at most once a second, a closed connection ends
/// a pause at once.
extension Worker {
    /// The first pause after a failed accept; it doubles to the listener's 1 s while accepts keep failing.
    static let initialAcceptBackoffMilliseconds = 10

    /// A failed accept (EMFILE, ENFILE, ENOBUFS, ENOMEM): the listener has paused and retries by itself.
    func acceptFailed(_ code: Int32) {
        pausedListeners += 1
        metrics.limits.acceptPaused()
        guard let count = acceptErrorLog.record(now: nowMicroseconds() / 1000) else { return }
        logger.warning(
            "Cannot accept connections; pausing the listener",
            metadata: [
                "worker": String(index), "error": IOError.text(errno: code), "failures": String(count),
                "connections": String(connectionCount),
            ])
    }

    /// A paused listener accepts again.
    func acceptResumed() {
        pausedListeners = max(0, pausedListeners - 1)
        if pausedListeners == 0 { metrics.limits.acceptResumed() }
    }

    /// Ends every accept pause now: a connection closed, so a descriptor is free.
    func retryPausedListeners() {
        guard pausedListeners > 0 else { return }
        for listener in listeners { listener.retryNow() }
    }

    /// Why a connection is shed.
    enum ShedReason {
        case maxConnections
        /// Accepted with the listener's spare descriptor at EMFILE/ENFILE.
        case descriptorLimit
    }

    /// Over `max_connections` or at the descriptor limit: a short `503 SlowDown` with `Retry-After` (S3 clients back
    /// off and retry) and the connection closes, instead of waiting unanswered in the backlog.
    func shed(_ fd: Int32, reason: ShedReason) {
        metrics.limits.connectionShed()
        let detail =
            switch reason {
            case .maxConnections: "presignd has max_connections client connections open"
            case .descriptorLimit: "presignd is at its file-descriptor limit"
            }
        let answer = LocalAnswerEncoding.closingError(.slowDown(detail), requestID: nextRequestID(), resource: "/")
        ImmediateAnswer.send(answer, andClose: fd)
    }
}
