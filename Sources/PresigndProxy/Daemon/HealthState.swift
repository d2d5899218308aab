import PresigndSync

#if canImport(Glibc)
    import Glibc
#endif

/// What `/readyz` and the reload metrics report, shared between the main thread and the admin side.
final class HealthState: Sendable {
    struct State: Sendable {
        var isReady = false
        var reloadsOK = 0
        var reloadsFailed = 0
        var loadedAtEpochSeconds = 0
        /// How long reading and validating the running configuration (and its credentials) took.
        var loadDurationMicros = 0
        /// Upstreams without valid credentials, and why (`/readyz` is not ready while any is listed).
        var credentialProblems: [String: String] = [:]
    }

    private let state = Locked(State())

    init(loadDurationMicros: Int = 0) {
        state.withLock { $0.loadDurationMicros = loadDurationMicros }
    }

    func snapshot() -> State { state.withLock { $0 } }

    func setReady(_ ready: Bool) {
        state.withLock {
            $0.isReady = ready
            if ready && $0.loadedAtEpochSeconds == 0 { $0.loadedAtEpochSeconds = Self.now() }
        }
    }

    /// Records (or, with nil, clears) why an upstream has no valid credentials.
    func setCredentialProblem(upstream: String, _ problem: String?) {
        state.withLock { $0.credentialProblems[upstream] = problem }
    }

    /// A reload finished; a good one records when and how fast its configuration was loaded.
    func noteReload(ok: Bool, loadDurationMicros: Int = 0) {
        state.withLock {
            if ok {
                $0.reloadsOK += 1
                $0.loadedAtEpochSeconds = Self.now()
                $0.loadDurationMicros = loadDurationMicros
            } else {
                $0.reloadsFailed += 1
            }
        }
    }

    private static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int(time.tv_sec)
    }
}
