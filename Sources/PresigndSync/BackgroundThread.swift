#if canImport(Glibc)
    import Glibc
#endif

/// A detached thread for one long or blocking job off every event loop (a credential fetch, a cache's writer).
public enum BackgroundThread {
    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread; false when the thread could not be made (`body` did not run).
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let job = Unmanaged.passRetained(Job(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Job>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, job)
        guard status == 0 else {
            Unmanaged<Job>.fromOpaque(job).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Lowers the calling thread to idle CPU priority: `SCHED_IDLE` (Linux: it runs only on CPU nothing else
    /// wants), else nice 19 (on Linux the nice value of `PRIO_PROCESS` 0 is the calling thread's).
    public static func lowerToIdlePriority() {
        var parameters = sched_param()
        let schedIdle: Int32 = 5  // SCHED_IDLE, <sched.h> with _GNU_SOURCE
        if pthread_setschedparam(pthread_self(), schedIdle, &parameters) == 0 { return }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
    }
}
