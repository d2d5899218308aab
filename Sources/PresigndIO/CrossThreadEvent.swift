internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// Wakes a loop from another thread: an eventfd the loop reads; the closure runs on the loop's thread.
/// Safe with lockless loops (a plain `write`, no libevent call from the foreign thread); wake-ups that
/// arrive together run the action once.
public final class CrossThreadEvent: @unchecked Sendable {
    private let event: OpaquePointer
    private let fd: Int32
    private let action: () -> Void
    /// Kept so the base outlives the event: `event_free` locks the base's mutex.
    private let loop: EventLoop

    public init(loop: EventLoop, action: @escaping () -> Void) throws(IOError) {
        self.action = action
        self.loop = loop
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .lastSystemError("eventfd") }
        self.fd = fd
        do {
            event = try LibeventEvent.new(loop, fd: fd, flags: EV_READ | EV_PERSIST) { _, _, context in
                LibeventEvent.owner(context, as: CrossThreadEvent.self)?.wake()
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        // From here on `deinit` frees the event and closes the eventfd if the rest throws.
        try LibeventEvent.setOwner(event, self)
        try LibeventEvent.add(event, milliseconds: nil)
    }

    /// Thread-safe. A full counter (EAGAIN) means a wake-up is already pending, which is all a fire asks for.
    public func fire() {
        var one: UInt64 = 1
        while write(fd, &one, 8) < 0 && errno == EINTR {}
    }

    private func wake() {
        var count: UInt64 = 0
        // EAGAIN: another wake-up took the count already; the action runs anyway, which is harmless.
        while read(fd, &count, 8) < 0 && errno == EINTR {}
        action()
    }

    deinit {
        event_free(event)
        Glibc.close(fd)
    }
}
