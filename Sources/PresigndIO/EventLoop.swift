internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// One libevent `event_base` (and, once a `Connector` needs it, its `evdns_base`), owned by one thread. Not
/// `Sendable`: everything that touches it runs on its thread; other threads reach it only through
/// `CrossThreadEvent`.
public final class EventLoop {
    /// The `event_base`, for the proxy code that still calls libevent itself until it is ported.
    package let base: OpaquePointer
    private var dnsBase: OpaquePointer?
    /// Where this loop's small socket reads land (`ReadBlock`).
    let readBlock = ReadBlock(capacity: 16 * 1024)

    /// The oldest libevent whose behaviour PresigndIO relies on (2.1: `evbuffer_reserve_space` handing out two
    /// vectors, `evconnlistener_set_error_cb` with a working disable inside it).
    static let minimumLibeventVersion: UInt32 = 0x0201_0800

    /// Call once per process before any loop is made: threads on (cross-thread `event_active`, the daemon's main
    /// loop is woken by other threads). libevent allocates with the system allocator.
    public static func enableThreads() throws(IOError) {
        guard evthread_use_pthreads() == 0 else { throw .outOfMemory("evthread_use_pthreads") }
    }

    /// - Parameter lockless: a loop that only its own thread touches (workers: other threads reach them
    ///   through `CrossThreadEvent`, an eventfd) needs no base lock, which libevent otherwise takes on
    ///   every event_add/del once threading is on.
    public init(lockless: Bool = false) throws(IOError) {
        let version = event_get_version_number()
        guard version >= Self.minimumLibeventVersion else {
            throw .eventLoop("libevent \(String(cString: event_get_version())) is too old; 2.1.8 or newer is needed")
        }
        // The epoll changelist folds an add and a delete of the same event within one loop
        // iteration into nothing: fewer epoll_ctl calls per request (DESIGN §7: syscalls dominate).
        guard let config = event_config_new() else { throw .outOfMemory("event_config_new") }
        defer { event_config_free(config) }
        var flags = EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue
        if lockless { flags |= EVENT_BASE_FLAG_NOLOCK.rawValue }
        guard event_config_set_flag(config, Int32(flags)) == 0 else {
            throw .eventLoop("event_config_set_flag refused \(flags)")
        }
        guard let base = event_base_new_with_config(config) else {
            throw .eventLoop("event_base_new_with_config failed (no usable backend or out of memory)")
        }
        self.base = base
    }

    deinit {
        // Pending lookups are failed (their callbacks run with EVUTIL_EAI_CANCEL) so that nothing they hold leaks.
        if let dnsBase { evdns_base_free(dnsBase, 1) }
        event_base_free(base)
    }

    /// Runs until `exit()` or until no events remain.
    public func run() throws(IOError) {
        guard event_base_dispatch(base) >= 0 else { throw .eventLoop("event_base_dispatch failed") }
    }

    /// Waits for at least one event and runs what is active, then returns (`EVLOOP_ONCE`): for tests and for
    /// loops that check a condition between rounds. Returns false when no events are pending at all.
    @discardableResult
    public func runOnce() throws(IOError) -> Bool {
        let status = event_base_loop(base, EVLOOP_ONCE)
        guard status >= 0 else { throw .eventLoop("event_base_loop failed") }
        return status == 0
    }

    /// Leaves `run()` once the active callbacks of this iteration have run. If libevent cannot queue the exit
    /// (it allocates an event for it), the loop stops right after the running callback instead.
    public func exit() {
        if event_base_loopexit(base, nil) != 0 {
            // Fails only for a NULL base; nothing more can be done.
            _ = event_base_loopbreak(base)
        }
    }

    /// The time libevent took when the current loop iteration woke up (its monotonic clock plus an offset to
    /// the wall clock that it refreshes every few seconds), in microseconds since the epoch: what request
    /// timings, signing dates and timeouts read while handling events, so that they cost no clock read of their
    /// own. Outside a callback it reads the clock.
    public var nowMicroseconds: Int {
        Self.cachedMicroseconds(base)
    }

    /// `nowMicroseconds` for code that holds only the base (until the proxy's own loop users are ported).
    package static func cachedMicroseconds(_ base: OpaquePointer) -> Int {
        var time = timeval()
        if event_base_gettimeofday_cached(base, &time) != 0 {
            gettimeofday(&time, nil)
        }
        return Int(time.tv_sec) * 1_000_000 + Int(time.tv_usec)
    }

    /// The loop's `evdns_base`, made on first use: non-blocking DNS from /etc/resolv.conf and /etc/hosts
    /// (DESIGN §2). Loops that never connect anywhere (the main loop) hold no resolver sockets.
    package func dns() throws(IOError) -> OpaquePointer {
        if let dnsBase { return dnsBase }
        guard let made = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE)
        else { throw .outOfMemory("evdns_base_new") }
        // Without /etc/hosts names go to the nameservers only; that is not a reason to refuse DNS.
        _ = evdns_base_load_hosts(made, nil)
        dnsBase = made
        return made
    }

    /// Replaces the resolver's nameservers with `addresses` (`"127.0.0.1:5353"`, `"[::1]:53"`): for tests that
    /// answer DNS themselves, and for deployments that want fixed resolvers.
    public func useNameservers(_ addresses: [String]) throws(IOError) {
        let dns: OpaquePointer
        let suspended: Bool
        if let dnsBase {
            guard evdns_base_clear_nameservers_and_suspend(dnsBase) == 0 else {
                throw .eventLoop("evdns_base_clear_nameservers_and_suspend failed")
            }
            dns = dnsBase
            suspended = true
        } else {
            guard let made = evdns_base_new(base, EVDNS_BASE_DISABLE_WHEN_INACTIVE) else {
                throw .outOfMemory("evdns_base_new")
            }
            dns = made
            dnsBase = made
            suspended = false
        }
        for address in addresses {
            let status = evdns_base_nameserver_ip_add(dns, address)
            guard status == 0 else { throw .eventLoop("evdns_base_nameserver_ip_add(\(address)) failed: \(status)") }
        }
        if suspended {
            guard evdns_base_resume(dns) == 0 else { throw .eventLoop("evdns_base_resume failed") }
        }
    }
}
