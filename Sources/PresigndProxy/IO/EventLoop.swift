import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// One libevent `event_base` and its `evdns_base`, owned by one thread. Not `Sendable`: everything
/// that touches it runs on its thread; other threads reach it only through `CrossThreadEvent`.
final class EventLoop {
    let base: OpaquePointer
    let dns: OpaquePointer?

    /// Call once per process before any loop is made: threads on (cross-thread `event_active`). libevent
    /// allocates with the system allocator, the one the sanitizer runs check.
    static func enableThreads() {
        evthread_use_pthreads()
    }

    /// - Parameter lockless: a loop that only its own thread touches (workers: other threads reach them
    ///   through `CrossThreadEvent`, an eventfd) needs no base lock, which libevent otherwise takes on
    ///   every event_add/del once threading is on.
    init(lockless: Bool = false) throws(StartupError) {
        // The epoll changelist folds an add and a delete of the same event within one loop
        // iteration into nothing: fewer epoll_ctl calls per request (DESIGN §7: syscalls dominate).
        guard let config = event_config_new() else { throw .eventLoop("event_config_new failed") }
        defer { event_config_free(config) }
        var flags = EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue
        if lockless { flags |= EVENT_BASE_FLAG_NOLOCK.rawValue }
        event_config_set_flag(config, Int32(flags))
        guard let base = event_base_new_with_config(config) else { throw .eventLoop("event_base_new failed") }
        self.base = base
        // Non-blocking DNS from /etc/resolv.conf and /etc/hosts (DESIGN §2).
        self.dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE)
        if let dns {
            evdns_base_load_hosts(dns, nil)
        }
    }

    deinit {
        if let dns { evdns_base_free(dns, 0) }
        event_base_free(base)
    }

    /// Runs until `exit()` or until no events remain.
    func run() {
        event_base_dispatch(base)
    }

    func exit() {
        event_base_loopexit(base, nil)
    }

    /// The time libevent took when the current loop iteration woke up (its monotonic clock plus an offset to
    /// the wall clock that it refreshes every few seconds), in microseconds since the epoch: what request
    /// timings, signing dates and timeouts read while handling events, so that they cost no clock read of their
    /// own (a `clock_gettime` is ~20 ns on these VMs; a request took five). Outside a callback it reads the clock.
    static func cachedMicroseconds(_ base: OpaquePointer) -> Int {
        var time = timeval()
        event_base_gettimeofday_cached(base, &time)
        return Int(time.tv_sec) * 1_000_000 + Int(time.tv_usec)
    }
}

/// `timeval` from milliseconds.
func timeValue(milliseconds: Int) -> timeval {
    timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
}

/// A timer on a loop that calls a closure; re-armable, cancelled on deinit.
final class LoopTimer {
    private var event: OpaquePointer?
    private let action: () -> Void
    /// Kept so the base outlives the event (`event_free` touches it), whatever order owners go in.
    private let loop: EventLoop

    init(loop: EventLoop, repeats: Bool = false, action: @escaping () -> Void) {
        self.action = action
        self.loop = loop
        let flags = Int16(repeats ? EV_PERSIST : 0)
        event = event_new(
            loop.base, -1, flags,
            { _, _, context in
                guard let context else { return }
                Unmanaged<LoopTimer>.fromOpaque(context).takeUnretainedValue().action()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    func schedule(milliseconds: Int) {
        guard let event else { return }
        var time = timeValue(milliseconds: milliseconds)
        event_add(event, &time)
    }

    func cancel() {
        if let event { event_del(event) }
    }

    deinit {
        if let event { event_free(event) }
    }
}

/// Wakes a loop from another thread: an eventfd the loop reads; the closure runs on the loop's thread.
/// Safe with lockless loops (a plain `write`, no libevent call from the foreign thread); wake-ups that
/// arrive together run the action once.
final class CrossThreadEvent: @unchecked Sendable {
    private var event: OpaquePointer?
    private let fd: Int32
    private let action: () -> Void
    /// Kept so the base outlives the event: the daemon's loop used to go before its wake-up event
    /// (stored properties are destroyed in declaration order), and `event_free` then locked the
    /// freed base's mutex at exit.
    private let loop: EventLoop

    init(loop: EventLoop, action: @escaping () -> Void) throws(StartupError) {
        self.action = action
        self.loop = loop
        fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw .eventLoop("eventfd failed: \(String(cString: strerror(errno)))") }
        event = event_new(
            loop.base, fd, Int16(EV_READ | EV_PERSIST),
            { _, _, context in
                guard let context else { return }
                Unmanaged<CrossThreadEvent>.fromOpaque(context).takeUnretainedValue().wake()
            }, Unmanaged.passUnretained(self).toOpaque())
        if let event { event_add(event, nil) }
    }

    /// Thread-safe.
    func fire() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    private func wake() {
        var count: UInt64 = 0
        _ = read(fd, &count, 8)
        action()
    }

    deinit {
        if let event { event_free(event) }
        close(fd)
    }
}
