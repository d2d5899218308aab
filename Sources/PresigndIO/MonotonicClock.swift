#if canImport(Glibc)
    import Glibc
#endif

/// Microseconds on `CLOCK_MONOTONIC` (vDSO, tens of nanoseconds): durations for the access log
/// and the latency histograms, which the loop's cached millisecond time is too coarse for.
public enum MonotonicClock {
    /// `clock_gettime` cannot fail for these clocks on Linux (both exist since 2.6.32 and the argument is valid).
    public static func microseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000
    }

    /// Milliseconds on `CLOCK_MONOTONIC_COARSE`: the kernel's tick time, read from the vDSO without
    /// touching the TSC. A few milliseconds behind at most, which is plenty for timeouts of seconds.
    public static func coarseMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000
    }
}
