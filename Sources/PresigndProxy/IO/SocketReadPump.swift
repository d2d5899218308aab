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
/// input buffer, reads with one `recv`, and commits what arrived. The reservation adapts: it
/// doubles while reads fill it (bulk bodies, up to 256 or 512 KiB) and halves for small messages, so idle
/// keep-alive connections hold no big buffers. The bufferevent keeps the write side; its own
/// reading stays disabled.
///
/// The read timeout is a deadline kept here, not a libevent timeout on the read event: that one
/// costs a timer-heap update on every read and every change of timeout (six a proxied request). The
/// pump's timer is armed only when a deadline comes earlier than the one it already waits for;
/// when it fires before the current deadline (the deadline moved on with a read or a longer
/// timeout) it waits again for the rest.
final class SocketReadPump {
    private var event: OpaquePointer?
    private var timer: OpaquePointer?
    private let fd: Int32
    private let input: OpaquePointer
    /// Kept so the base outlives the pump's events (`event_free` touches it).
    private let loop: EventLoop
    /// The pump's owner, which owns the pump. Each callback holds a strong reference for the call's duration:
    /// a callback may drop the owner's last other reference (a connection that closes is removed from its
    /// worker while its own method still runs).
    private unowned let delegate: SocketReadPumpDelegate
    private var timeoutMilliseconds: Int
    private(set) var isEnabled = false
    /// When reading times out (`MonotonicClock.coarseMilliseconds`); 0 while no timeout runs.
    private var deadline = 0
    /// The deadline the timer is armed for; 0 while it is not armed.
    private var timerExpiry = 0

    /// Bounds for one read; the size adapts between them (no `FIONREAD` syscall per read).
    ///
    /// Responses are read up to 512 KiB at a time: libevent gives such a reservation a 1 MiB chain whose second half
    /// takes the next read, and a 1 GiB GET measured 5-10% more MiB/s for 10-20% less CPU per GiB than with 256 KiB,
    /// side by side. Request bodies stay at 256 KiB: uploads gained nothing from larger reads, and a connection
    /// whose upstream takes its body slowly holds its buffered reads in those half-used chains (eight uploads to a
    /// slow upstream peaked at 27.6 MiB with 512 KiB reads, 23.1 MiB with 256 KiB).
    static let maxResponseRead = 512 * 1024
    static let maxRequestRead = 256 * 1024
    static let minRead = 4096
    private let maxRead: Int
    private var readSize = 16384

    init(
        loop: EventLoop, fd: Int32, input: OpaquePointer, maxRead: Int, timeoutMilliseconds: Int,
        delegate: SocketReadPumpDelegate
    ) {
        self.maxRead = maxRead
        self.fd = fd
        self.input = input
        self.loop = loop
        self.delegate = delegate
        self.timeoutMilliseconds = timeoutMilliseconds
        // A socket bufferevent keeps its input's end frozen except while it reads itself. Its owner
        // never lets it read while a pump exists, so the end stays thawed for the pump's whole life
        // (not thawed and frozen again around every read: two locked calls each).
        evbuffer_unfreeze(input, 0)
        let context = Unmanaged.passUnretained(self).toOpaque()
        event = event_new(
            loop.base, fd, Int16(EV_READ | EV_PERSIST),
            { _, _, context in
                guard let context else { return }
                Unmanaged<SocketReadPump>.fromOpaque(context).takeUnretainedValue().handleReadable()
            }, context)
        timer = event_new(
            loop.base, -1, 0,
            { _, _, context in
                guard let context else { return }
                Unmanaged<SocketReadPump>.fromOpaque(context).takeUnretainedValue().handleTimer()
            }, context)
    }

    deinit {
        if let event { event_free(event) }
        if let timer { event_free(timer) }
    }

    /// Starts reading. On a pump already reading this changes nothing: every caller that means to restart
    /// the timeout sets it first (`setTimeout`), and a second `event_add` per call site was pure cost.
    func enable() {
        guard !isEnabled, let event else { return }
        isEnabled = true
        event_add(event, nil)
        restartDeadline()
    }

    func disable() {
        guard isEnabled, let event else { return }
        isEnabled = false
        deadline = 0  // an armed timer finds no deadline and does nothing
        event_del(event)
    }

    /// A new read timeout (0: none), counted from now when enabled.
    func setTimeout(milliseconds: Int) {
        timeoutMilliseconds = milliseconds
        if isEnabled { restartDeadline() }
    }

    /// The deadline moves to now + timeout; the timer is only touched when that is earlier than
    /// what it waits for (a later deadline is picked up when it fires).
    private func restartDeadline() {
        guard timeoutMilliseconds > 0 else {
            deadline = 0
            return
        }
        deadline = MonotonicClock.coarseMilliseconds() + timeoutMilliseconds
        if timerExpiry == 0 || deadline < timerExpiry { armTimer(milliseconds: timeoutMilliseconds) }
    }

    private func armTimer(milliseconds: Int) {
        guard let timer else { return }
        var timeout = timeValue(milliseconds: milliseconds)
        event_add(timer, &timeout)
        timerExpiry = deadline
    }

    private func handleTimer() {
        timerExpiry = 0
        guard isEnabled, deadline != 0 else { return }
        let remaining = deadline - MonotonicClock.coarseMilliseconds()
        if remaining > 0 {
            armTimer(milliseconds: remaining)
            return
        }
        deadline = 0
        let owner: SocketReadPumpDelegate = delegate
        owner.pumpDidEnd(Int16(BEV_EVENT_READING | BEV_EVENT_TIMEOUT))
    }

    /// One receive into the reserved vectors: `recv` for one (the common case), `recvmsg` for two.
    /// Not `readv`: on a socket that goes through the VFS layer (file position lock, iovec import,
    /// permission hooks), measured ~0.2 µs a call more than `recv` on this machine kind.
    @inline(__always)
    private static func receive(_ fd: Int32, _ vector: UnsafeMutablePointer<iovec>, count: Int) -> Int {
        if count == 1 { return recv(fd, vector[0].iov_base, vector[0].iov_len, 0) }
        var message = msghdr()
        message.msg_iov = vector
        message.msg_iovlen = count
        return recvmsg(fd, &message, 0)
    }

    /// Must not touch `self` after the delegate call (see `init`).
    private func handleReadable() {
        let want = readSize
        var vectors = (iovec(), iovec())
        let result: Int = withUnsafeMutablePointer(to: &vectors) { pair in
            pair.withMemoryRebound(to: iovec.self, capacity: 2) { vector in
                let count = evbuffer_reserve_space(input, want, vector, 2)
                guard count > 0 else { return -2 }
                var got = Self.receive(fd, vector, count: Int(count))
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
                readSize = min(maxRead, want * 2)
            } else if result < want / 4 {
                readSize = max(Self.minRead, want / 2)
            }
            // The read timeout counts from the last byte (an idle timeout), as libevent's did.
            if deadline != 0 { restartDeadline() }
            let owner: SocketReadPumpDelegate = delegate
            owner.pumpDidRead()
        } else if result == 0 {
            let owner: SocketReadPumpDelegate = delegate
            owner.pumpDidEnd(Int16(BEV_EVENT_READING | BEV_EVENT_EOF))
        } else if result == -1 && (errno == EAGAIN || errno == EINTR) {
            return
        } else {
            let owner: SocketReadPumpDelegate = delegate
            owner.pumpDidEnd(Int16(BEV_EVENT_READING | BEV_EVENT_ERROR))
        }
    }
}
