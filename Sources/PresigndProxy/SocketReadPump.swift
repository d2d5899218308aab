import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// What a read pump reports: bytes arrived, or reading ended (EOF, error, timeout) as
/// `BEV_EVENT_*` flags, so owners handle it exactly like a bufferevent event.
protocol SocketReadPumpDelegate: AnyObject {
    func pumpDidRead()
    func pumpDidEnd(_ events: Int16)
}

/// Reads a plain socket into a bufferevent's input buffer in large pieces.
///
/// libevent 2.1 reads a socket at most 4096 bytes per call (`EVBUFFER_MAX_READ`), one loop
/// iteration each, which capped uploads at ~170 MB/s (DESIGN §7). The pump reserves space in the
/// input buffer, reads with one `readv`, and commits what arrived. The reservation adapts: it
/// doubles while reads fill it (bulk bodies, up to 256 KiB) and halves for small messages, so idle
/// keep-alive connections hold no big buffers. The bufferevent keeps the write side; its own
/// reading stays disabled.
final class SocketReadPump {
    private var event: OpaquePointer?
    private let fd: Int32
    private let input: OpaquePointer
    /// The pump's owner. Weak on purpose: the load returns a strong reference that keeps the owner alive
    /// for the whole callback, and a callback may drop the owner's last other reference (a connection
    /// that closes is removed from its worker while its own method still runs).
    private weak var delegate: SocketReadPumpDelegate?
    private var timeoutMilliseconds: Int
    private(set) var isEnabled = false
    private var hasTimeout = false

    /// Bounds for one read; the size adapts between them (no `FIONREAD` syscall per read).
    static let maxRead = 256 * 1024
    static let minRead = 4096
    private var readSize = 16384

    init(loop: EventLoop, fd: Int32, input: OpaquePointer, timeoutMilliseconds: Int, delegate: SocketReadPumpDelegate) {
        self.fd = fd
        self.input = input
        self.delegate = delegate
        self.timeoutMilliseconds = timeoutMilliseconds
        event = event_new(
            loop.base, fd, Int16(EV_READ | EV_PERSIST),
            { _, what, context in
                guard let context else { return }
                Unmanaged<SocketReadPump>.fromOpaque(context).takeUnretainedValue().handle(what)
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let event { event_free(event) }
    }

    /// Starts reading. On a pump already reading this changes nothing: every caller that means to restart
    /// the timeout sets it first (`setTimeout`), and a second `event_add` per call site was pure cost.
    func enable() {
        guard !isEnabled else { return }
        arm()
    }

    /// (Re)arms the read event with the current timeout.
    private func arm() {
        guard let event else { return }
        isEnabled = true
        if timeoutMilliseconds > 0 {
            var timeout = timeValue(milliseconds: timeoutMilliseconds)
            event_add(event, &timeout)
            hasTimeout = true
        } else {
            // event_add(ev, NULL) keeps a timeout already scheduled: remove just the timer. (A delete
            // and re-add would leave an EPOLL_CTL_MOD in the changelist: one system call a request.)
            if hasTimeout { event_remove_timer(event) }
            event_add(event, nil)
            hasTimeout = false
        }
    }

    func disable() {
        guard let event else { return }
        isEnabled = false
        hasTimeout = false
        event_del(event)
    }

    /// A new read timeout, applied now when enabled (re-arming restarts it).
    func setTimeout(milliseconds: Int) {
        timeoutMilliseconds = milliseconds
        if isEnabled { arm() }
    }

    private func handle(_ what: Int16) {
        if Int32(what) & Int32(EV_TIMEOUT) != 0 {
            delegate?.pumpDidEnd(Int16(BEV_EVENT_READING | BEV_EVENT_TIMEOUT))
            return
        }
        let want = readSize
        var vectors = (iovec(), iovec())
        // A socket bufferevent keeps its input's end frozen except while it reads itself.
        evbuffer_unfreeze(input, 0)
        defer { evbuffer_freeze(input, 0) }
        let result: Int = withUnsafeMutablePointer(to: &vectors) { pair in
            pair.withMemoryRebound(to: iovec.self, capacity: 2) { vector in
                let count = evbuffer_reserve_space(input, want, vector, 2)
                guard count > 0 else { return -2 }
                var got = readv(fd, vector, count)
                if got < 0 { return got }
                // Trim the reservation to what arrived before committing.
                var remaining = got
                for index in 0..<Int(count) {
                    let used = min(remaining, vector[index].iov_len)
                    vector[index].iov_len = used
                    remaining -= used
                }
                let used = vector[1].iov_len > 0 ? 2 : 1
                if got > 0 && evbuffer_commit_space(input, vector, Int32(used)) != 0 { got = -2 }
                return got
            }
        }
        if result > 0 {
            // Adapt the next reservation: grow while reads fill it, shrink for small messages.
            if result >= want {
                readSize = min(Self.maxRead, want * 2)
            } else if result < want / 4 {
                readSize = max(Self.minRead, want / 2)
            }
            delegate?.pumpDidRead()
        } else if result == 0 {
            delegate?.pumpDidEnd(Int16(BEV_EVENT_READING | BEV_EVENT_EOF))
        } else if result == -1 && (errno == EAGAIN || errno == EINTR) {
            return
        } else {
            delegate?.pumpDidEnd(Int16(BEV_EVENT_READING | BEV_EVENT_ERROR))
        }
    }
}
