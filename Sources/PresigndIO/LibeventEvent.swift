internal import CLibevent

/// libevent events whose callback argument is the Swift object that owns them. That object exists only once its
/// stored properties (the events among them) are set, so an event is made without an argument first
/// (`newEvent`) and given its owner once the owner is complete (`setOwner`).
enum LibeventEvent {
    static func new(
        _ loop: EventLoop, fd: Int32 = -1, flags: Int32, _ callback: event_callback_fn
    ) throws(IOError) -> OpaquePointer {
        guard let event = event_new(loop.base, fd, Int16(truncatingIfNeeded: flags), callback, nil) else {
            throw .outOfMemory("event_new")
        }
        return event
    }

    /// Points a new (not yet pending) event's callback argument at `owner`, unretained: the owner frees the event
    /// before it goes.
    static func setOwner(_ event: OpaquePointer, _ owner: AnyObject) throws(IOError) {
        var base: OpaquePointer?
        var fd: Int32 = -1
        var flags: Int16 = 0
        var callback: event_callback_fn?
        var argument: UnsafeMutableRawPointer?
        event_get_assignment(event, &base, &fd, &flags, &callback, &argument)
        let context = Unmanaged.passUnretained(owner).toOpaque()
        guard event_assign(event, base, fd, flags, callback, context) == 0 else {
            throw .eventLoop("event_assign failed")
        }
    }

    /// `event_add`, whose failures are all allocation failures once the event is valid (the timer heap or the
    /// epoll changelist could not grow).
    static func add(_ event: OpaquePointer, milliseconds: Int?) throws(IOError) {
        let status: Int32
        if let milliseconds {
            var time = timeValue(milliseconds: milliseconds)
            status = event_add(event, &time)
        } else {
            status = event_add(event, nil)
        }
        guard status == 0 else { throw .outOfMemory("event_add") }
    }

    /// `event_del`: fails only for an event without a base, which `new` rules out; for the changelist it may
    /// need to allocate, and then the event stays registered and its next callback finds it unwanted.
    @discardableResult
    static func remove(_ event: OpaquePointer) -> Bool {
        event_del(event) == 0
    }

    /// The owner behind a callback's argument.
    @inline(__always)
    static func owner<Owner: AnyObject>(_ context: UnsafeMutableRawPointer?, as _: Owner.Type) -> Owner? {
        guard let context else { return nil }
        return Unmanaged<Owner>.fromOpaque(context).takeUnretainedValue()
    }
}
