internal import CLibevent

/// Runs a closure on the loop's thread whenever the process receives `signal` (libevent's signal pipe: the
/// handler only writes a byte). Removed when it goes.
public final class SignalEvent {
    public let signal: Int32
    private let event: OpaquePointer
    private let action: () -> Void
    private let loop: EventLoop

    public init(loop: EventLoop, signal: Int32, action: @escaping () -> Void) throws(IOError) {
        self.signal = signal
        self.action = action
        self.loop = loop
        event = try LibeventEvent.new(loop, fd: signal, flags: EV_SIGNAL | EV_PERSIST) { _, _, context in
            LibeventEvent.owner(context, as: SignalEvent.self)?.action()
        }
        try LibeventEvent.setOwner(event, self)
        guard event_add(event, nil) == 0 else {
            throw .eventLoop("event_add failed for signal \(signal) (another loop may own signals already)")
        }
    }

    deinit {
        event_free(event)
    }
}
