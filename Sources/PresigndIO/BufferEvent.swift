internal import CLibevent
internal import COpenSSL
import PresigndOpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// A TLS client stream over an already connected socket: libevent's OpenSSL bufferevent
/// (`bufferevent_openssl_socket_new`, `BUFFEREVENT_SSL_CONNECTING`), the one bufferevent PresigndIO makes, with
/// one set of C callbacks. The handshake starts at once; `onHandshake` hears how it went (whether the session
/// was resumed, or why it failed), and only after a successful handshake does the owner hear anything.
///
/// libevent writes whatever `output` holds as soon as the socket takes it (its output callback arms the write
/// event), so `flush()` has nothing to do. A peer that closes without close_notify ends the stream as
/// `.endOfFile` (dirty shutdown allowed: many servers do that; framing tells complete bodies from cut ones).
///
/// OpenSSL writes to the socket with `write(2)`, not `send(MSG_NOSIGNAL)`: the process must ignore `SIGPIPE`
/// (presignd does, DESIGN §5), or a write to a reset peer kills it.
public final class BufferEvent: ByteStream {
    public let input: IOBuffer
    public let output: IOBuffer
    // Public state over internal storage, as in `SocketStream`: the stored properties' exclusivity is checked
    // statically.
    public var delegate: StreamDelegate? {
        get { owner }
        set { StreamOwner.replace(&ownerSlot, with: newValue) }
    }
    public var isReading: Bool { reading }
    public var isClosed: Bool { closed }
    public var lowWatermark: Int {
        get { writeLowWatermark }
        set {
            guard !closed, newValue != writeLowWatermark else { return }
            writeLowWatermark = newValue
            bufferevent_setwatermark(bev, Int16(EV_WRITE), max(0, newValue), 0)
        }
    }
    /// The handshake completed.
    public var isOpen: Bool { handshakeDone }
    /// The handshake resumed a cached session.
    public var resumedSession: Bool { sessionResumed }
    private var ownerSlot: StreamOwner?
    var owner: StreamDelegate? { ownerSlot?.delegate }
    private var reading = false
    private var closed = false
    private var writeLowWatermark = 0
    private var handshakeDone = false
    private var sessionResumed = false
    /// The stream ended with a reset or a failure: no close_notify is sent to a peer that is gone.
    private var hasFailed = false

    let bev: OpaquePointer
    let ssl: OpaquePointer
    private let loop: EventLoop
    private var onHandshake: ((Result<Bool, StreamEnd>) -> Void)?
    /// A failure found inside a call from the owner, reported through a deferred event callback.
    var pendingEnd: StreamEnd?
    /// `SSL_OP_IGNORE_UNEXPECTED_EOF` (OpenSSL 3's `SSL_OP_BIT(7)`, a macro Swift does not import).
    static let ignoreUnexpectedEOF: UInt64 = 1 << 7
    private var readTimeoutMilliseconds = 0
    private var writeTimeoutMilliseconds = 0

    /// Takes `connectedFD` (non-blocking) and `ssl` (a client `SSL` with its SNI, verification and session set):
    /// both are freed when the stream goes, and when `init` throws.
    /// - Parameters:
    ///   - maxRead: the most libevent reads in one go (`bufferevent_set_max_single_read`).
    ///   - maxWrite: the most it writes in one go; `maxRead` when nil.
    public init(
        loop: EventLoop, connectedFD: Int32, ssl: OpaquePointer, maxRead: Int, maxWrite: Int? = nil,
        onHandshake: @escaping (Result<Bool, StreamEnd>) -> Void
    ) throws(IOError) {
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)
        guard
            let bev = bufferevent_openssl_socket_new(loop.base, connectedFD, ssl, BUFFEREVENT_SSL_CONNECTING, options)
        else {
            // libevent took neither: it fails before keeping them (or cannot allocate).
            SSL_free(ssl)
            Glibc.close(connectedFD)
            throw .tls(OpenSSLError.drain("bufferevent_openssl_socket_new failed").description)
        }
        self.bev = bev
        self.ssl = ssl
        self.loop = loop
        self.onHandshake = onHandshake
        input = IOBuffer(bufferevent_get_input(bev))
        output = IOBuffer(bufferevent_get_output(bev))
        // From here on `deinit` frees the bufferevent (and with it the SSL and the socket) if a call throws.
        // A FIN without close_notify is an end of file, not an error: OpenSSL 3 reports it as "unexpected eof
        // while reading" unless told to ignore it, and libevent's dirty-shutdown allowance covers what is left.
        _ = SSL_set_options(ssl, Self.ignoreUnexpectedEOF)
        bufferevent_openssl_set_allow_dirty_shutdown(bev, 1)
        guard bufferevent_set_max_single_read(bev, max(4096, maxRead)) == 0,
            bufferevent_set_max_single_write(bev, max(4096, maxWrite ?? maxRead)) == 0
        else { throw .eventLoop("bufferevent_set_max_single_read/write refused \(maxRead)") }
        bufferevent_setcb(
            bev, bufferEventReadable, bufferEventWritable, bufferEventEvent, Unmanaged.passUnretained(self).toOpaque())
        bufferevent_setwatermark(bev, Int16(EV_WRITE), 0, 0)
        // Writing stays enabled for the stream's life: libevent writes whenever output holds bytes.
        guard bufferevent_enable(bev, Int16(EV_WRITE)) == 0 else { throw .outOfMemory("bufferevent_enable") }
    }

    deinit {
        if !closed { free(cleanly: true) }
    }

    public func enableReading() {
        guard !reading, !closed else { return }
        guard bufferevent_enable(bev, Int16(EV_READ)) == 0 else {
            failSoon(.failed("bufferevent_enable: out of memory"))
            return
        }
        reading = true
    }

    public func disableReading() {
        guard reading, !closed else { return }
        reading = false
        // Fails only when the event cannot be removed from the changelist (allocation); the read callback then
        // finds `reading` false and ignores what arrives.
        _ = bufferevent_disable(bev, Int16(EV_READ))
    }

    public func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int) {
        guard !closed else { return }
        // Unchanged timeouts are not set again: that re-adds both events to the timer heap.
        guard readMilliseconds != readTimeoutMilliseconds || writeMilliseconds != writeTimeoutMilliseconds else {
            return
        }
        readTimeoutMilliseconds = readMilliseconds
        writeTimeoutMilliseconds = writeMilliseconds
        var read = timeValue(milliseconds: readMilliseconds)
        var write = timeValue(milliseconds: writeMilliseconds)
        let status = withUnsafePointer(to: &read) { readPointer in
            withUnsafePointer(to: &write) { writePointer in
                bufferevent_set_timeouts(
                    bev, readMilliseconds > 0 ? readPointer : nil, writeMilliseconds > 0 ? writePointer : nil)
            }
        }
        if status != 0 { failSoon(.failed("bufferevent_set_timeouts: out of memory")) }
    }

    /// libevent writes on its own as soon as `output` holds bytes; nothing to do.
    public func flush() {}

    public func close() {
        guard !closed else { return }
        free(cleanly: true)
    }

    public func reset() {
        guard !closed else { return }
        let fd = bufferevent_getfd(bev)
        if fd >= 0 {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            // If the option cannot be set the peer sees a FIN instead: nothing else is left to try.
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        free(cleanly: false)
    }

    /// A clean TLS shutdown first (when the handshake completed) so the session stays resumable (DESIGN §7).
    private func free(cleanly: Bool) {
        closed = true
        reading = false
        StreamOwner.replace(&ownerSlot, with: nil)
        onHandshake = nil
        if cleanly && handshakeDone && !hasFailed {
            // We do not wait for the peer's close_notify; a failure here (peer gone) is no error.
            SSL_set_shutdown(ssl, SSL_RECEIVED_SHUTDOWN)
            _ = SSL_shutdown(ssl)
        }
        OpenSSLError.clear()
        bufferevent_free(bev)
    }

    /// Reports `end` through a deferred event callback (`bufferevent_trigger_event`), on the next loop round.
    func failSoon(_ end: StreamEnd) {
        guard !closed, pendingEnd == nil else { return }
        pendingEnd = end
        bufferevent_trigger_event(bev, Int16(BEV_EVENT_ERROR), Int32(BEV_TRIG_DEFER_CALLBACKS.rawValue))
    }

    // MARK: Callbacks

    fileprivate func readable() {
        guard reading, !closed else { return }
        owner?.streamReadable()
    }

    fileprivate func drained() {
        guard !closed else { return }
        owner?.streamDrained()
    }

    fileprivate func event(_ events: Int16, errno code: Int32) {
        guard !closed else { return }
        let events = Int32(events)
        if events & Int32(BEV_EVENT_CONNECTED) != 0 {
            handshakeDone = true
            sessionResumed = SSL_session_reused(ssl) == 1
            let handshake = onHandshake
            onHandshake = nil
            handshake?(.success(sessionResumed))
            return
        }
        let end = pendingEnd ?? classify(events, errno: code)
        pendingEnd = nil
        reading = false
        switch end {
        case .reset, .failed: hasFailed = true
        case .endOfFile, .readTimeout, .writeTimeout: break
        }
        if !handshakeDone {
            let handshake = onHandshake
            onHandshake = nil
            handshake?(.failure(end))
            return
        }
        owner?.streamEnded(end)
    }
}

private func bufferEventReadable(_: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue().readable()
}

private func bufferEventWritable(_: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue().drained()
}

private func bufferEventEvent(_: OpaquePointer?, _ events: Int16, _ context: UnsafeMutableRawPointer?) {
    // errno first: it is the failed call's until anything else runs.
    let code = errno
    guard let context else { return }
    Unmanaged<BufferEvent>.fromOpaque(context).takeUnretainedValue().event(events, errno: code)
}
