internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A timer on a loop that calls a closure; re-armable, cancelled when it goes.
public final class LoopTimer {
    private let event: OpaquePointer
    private let action: () -> Void
    /// Kept so the base outlives the event (`event_free` touches it), whatever order owners go in.
    private let loop: EventLoop

    /// - Parameter repeats: fire every `schedule` interval until cancelled (`EV_PERSIST`).
    public init(loop: EventLoop, repeats: Bool = false, action: @escaping () -> Void) throws(IOError) {
        self.action = action
        self.loop = loop
        event = try LibeventEvent.new(loop, flags: repeats ? EV_PERSIST : 0) { _, _, context in
            LibeventEvent.owner(context, as: LoopTimer.self)?.action()
        }
        try LibeventEvent.setOwner(event, self)
    }

    deinit {
        event_free(event)
    }

    /// Fires once after `milliseconds` (0: on the next loop iteration), or every `milliseconds` for a repeating
    /// timer. Re-scheduling a pending timer moves it. Fails only when libevent cannot grow its timer heap.
    public func schedule(milliseconds: Int) throws(IOError) {
        try LibeventEvent.add(event, milliseconds: milliseconds)
    }

    /// Like `schedule`, but never fires early: libevent measures timers on `CLOCK_MONOTONIC_COARSE` (a tick of
    /// about 4 ms) and from the loop's cached time, so a plain timer can end a few milliseconds before a precise clock
    /// says. For waits a peer asked for (`Retry-After`): the cache is refreshed and one coarse tick added.
    public func scheduleAtLeast(milliseconds: Int) throws(IOError) {
        _ = event_base_update_cache_time(loop.base)
        try schedule(milliseconds: milliseconds + Self.coarseTickMilliseconds)
    }

    /// `CLOCK_MONOTONIC_COARSE`'s resolution in whole milliseconds, rounded up (at least 1).
    private static let coarseTickMilliseconds: Int = {
        var resolution = timespec()
        guard clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) == 0 else { return 10 }
        return max(1, Int(resolution.tv_sec) * 1000 + (Int(resolution.tv_nsec) + 999_999) / 1_000_000)
    }()

    /// Runs the action on the next loop iteration without touching the timer heap (`event_active`); cannot fail.
    public func fireSoon() {
        event_active(event, Int32(EV_TIMEOUT), 0)
    }

    /// Stops a pending timer; one that is not pending is left as it is.
    public func cancel() {
        LibeventEvent.remove(event)
    }

    /// Whether the timer waits to fire.
    public var isScheduled: Bool {
        event_pending(event, Int16(EV_TIMEOUT), nil) != 0
    }
}
