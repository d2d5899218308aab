internal import CLibevent

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
