import CLibevent
import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// How an upstream connection ended, as the exchange that used it sees it.
enum UpstreamFailure: Equatable {
    /// The peer closed (EOF) — normal for `untilClose` bodies, a failure otherwise.
    case closed
    /// The connection failed after it was established (a reset): never the end of a body.
    case reset(String)
    case dns(String)
    case connect(String)
    case tls(String)
    case timeout
}

/// What an upstream connection tells the exchange that currently owns it.
protocol UpstreamConnectionDelegate: AnyObject {
    func upstreamReadable(_ connection: UpstreamConnection)
    func upstreamDrained(_ connection: UpstreamConnection)
    func upstreamEnded(_ connection: UpstreamConnection, _ failure: UpstreamFailure)
}

/// One connection to an upstream (plain or TLS bufferevent). Lives in its worker's pool while
/// idle and is owned by one client exchange while busy.
final class UpstreamConnection: SocketReadPumpDelegate {
    let bev: OpaquePointer
    let upstreamIndex: Int
    private let ssl: OpaquePointer?
    /// Kept alive here: the SSL's ex_data points at it unretained.
    private let sessions: TLSSessionStore
    private(set) var isConnected = false
    /// Served at least one exchange before this one (a stale keep-alive may fail with no byte).
    var isReused = false
    /// The handshake resumed a cached TLS session.
    private(set) var resumedSession = false
    /// The client connection whose exchange uses this connection; nil while pooled. It sets itself and
    /// clears it (`free`, or the pool's `put`) before it goes.
    unowned var delegate: UpstreamConnectionDelegate?
    /// Called once when the TLS handshake completes, with whether it resumed a session (metrics).
    var onTLSHandshake: ((Bool) -> Void)?
    /// The pool holding this connection while it is idle: told when the connection speaks, ends or times out.
    /// The pool's idle list keeps the connection alive, and the connection is freed before the pool lets go of it.
    unowned var idlePool: UpstreamPool?
    private var isFreed = false
    /// A failure reported before anyone listened (evdns can answer inside `connect_hostname`).
    private(set) var earlyFailure: UpstreamFailure?
    /// Bounds name resolution plus TCP (and TLS) setup: evdns can park a query indefinitely when
    /// every nameserver is marked down, and the bufferevent's own timeout starts only at connect().
    private var connectDeadline: LoopTimer?
    private let loop: EventLoop
    /// Plain connections read through a pump once connected (large reads; see `SocketReadPump`).
    private var pump: SocketReadPump?
    private var wantsReading = true
    private var readTimeoutMilliseconds: Int
    /// The write timeout last given to the bufferevent while the pump reads (nil: not set since the pump began).
    private var pumpWriteTimeoutMilliseconds: Int?

    /// The bufferevent's buffers, fixed for its life (read once, not per use).
    let input: OpaquePointer
    let output: OpaquePointer
    /// The socket once connected (the bufferevent creates it when it connects).
    private var fd: Int32 = -1
    /// Whether the bufferevent's write event may be enabled: a new socket bufferevent starts with it
    /// enabled (it writes the head once connected); `EvBuffer.flushNow` keeps it current from then on.
    private var isWriteEnabled = true

    /// Starts connecting (DNS through evdns, then TCP, then TLS when configured).
    init(
        loop: EventLoop, target: UpstreamTarget, upstreamIndex: Int, sessions: TLSSessionStore, lowWatermark: Int
    ) throws(ProxyError) {
        self.upstreamIndex = upstreamIndex
        self.sessions = sessions
        self.loop = loop
        self.readTimeoutMilliseconds = target.firstByteTimeoutMilliseconds
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)
        if target.usesTLS, let tls = target.tls {
            guard let ssl = tls.makeSSL(host: target.host, sessions: sessions) else {
                throw .internalError("SSL_new failed")
            }
            guard
                let bev = bufferevent_openssl_socket_new(
                    loop.base, -1, ssl, BUFFEREVENT_SSL_CONNECTING, options)
            else {
                SSL_free(ssl)
                throw .internalError("bufferevent_openssl_socket_new failed")
            }
            // Many servers close without close_notify; that is not an error for framed bodies.
            bufferevent_openssl_set_allow_dirty_shutdown(bev, 1)
            self.bev = bev
            self.ssl = ssl
        } else {
            guard let bev = bufferevent_socket_new(loop.base, -1, options) else {
                throw .internalError("bufferevent_socket_new failed")
            }
            self.bev = bev
            self.ssl = nil
        }
        input = bufferevent_get_input(bev)!
        output = bufferevent_get_output(bev)!
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(
            bev,
            { _, context in
                guard let context else { return }
                Unmanaged<UpstreamConnection>.fromOpaque(context).takeUnretainedValue().handleReadable()
            },
            { _, context in
                guard let context else { return }
                Unmanaged<UpstreamConnection>.fromOpaque(context).takeUnretainedValue().handleDrained()
            },
            { _, events, context in
                guard let context else { return }
                Unmanaged<UpstreamConnection>.fromOpaque(context).takeUnretainedValue().handleEvent(events)
            }, context)
        bufferevent_setwatermark(bev, Int16(EV_WRITE), lowWatermark, 0)
        bufferevent_set_max_single_write(bev, SocketReadPump.maxRequestRead)
        bufferevent_set_max_single_read(bev, SocketReadPump.maxResponseRead)
        var connectTimeout = timeValue(milliseconds: target.connectTimeoutMilliseconds)
        var readTimeout = timeValue(milliseconds: target.firstByteTimeoutMilliseconds)
        bufferevent_set_timeouts(bev, &readTimeout, &connectTimeout)
        bufferevent_enable(bev, Int16(EV_READ | EV_WRITE))
        let deadline = LoopTimer(loop: loop) { [unowned self] in
            guard !self.isConnected, !self.isFreed else { return }
            self.report(.connect("timed out resolving or connecting to the upstream"))
        }
        deadline.schedule(milliseconds: target.connectTimeoutMilliseconds)
        connectDeadline = deadline
        if bufferevent_socket_connect_hostname(bev, loop.dns, AF_UNSPEC, target.host, Int32(target.port)) != 0 {
            let reason = Self.dnsOrSocketError(bev)
            bufferevent_free(bev)
            isFreed = true
            throw .upstreamConnect(reason)
        }
    }

    deinit {
        free()
    }

    /// Sets the read (first byte / idle) and write timeouts.
    func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int) {
        readTimeoutMilliseconds = readMilliseconds
        var read = timeValue(milliseconds: readMilliseconds)
        var write = timeValue(milliseconds: writeMilliseconds)
        if let pump {
            pump.setTimeout(milliseconds: readMilliseconds)
            // The write timeout rarely changes between phases (all default to 60 s): set it only when it does.
            if writeMilliseconds != pumpWriteTimeoutMilliseconds {
                bufferevent_set_timeouts(bev, nil, &write)
                pumpWriteTimeoutMilliseconds = writeMilliseconds
            }
        } else {
            bufferevent_set_timeouts(bev, &read, &write)
        }
    }

    func enableReading() {
        wantsReading = true
        if let pump { pump.enable() } else { bufferevent_enable(bev, Int16(EV_READ)) }
    }

    /// Whether the owner wants the response read (it pauses reading while the client's output is full).
    var isReading: Bool { wantsReading }

    func disableReading() {
        wantsReading = false
        if let pump { pump.disable() } else { bufferevent_disable(bev, Int16(EV_READ)) }
    }

    /// Writes pending output now (plain sockets once connected; TLS keeps libevent's path).
    func flush() {
        guard isConnected, ssl == nil, !isFreed else { return }
        _ = EvBuffer.flushNow(bev, output: output, fd: fd, writeEnabled: &isWriteEnabled)
    }

    func pumpDidRead() { handleReadable() }
    func pumpDidEnd(_ events: Int16) { handleEvent(events) }

    /// Closes the connection: a clean TLS shutdown first so the session stays resumable.
    func free() {
        guard !isFreed else { return }
        isFreed = true
        connectDeadline?.cancel()
        connectDeadline = nil
        delegate = nil
        idlePool = nil
        if let ssl, isConnected {
            SSL_set_shutdown(ssl, SSL_RECEIVED_SHUTDOWN)
            SSL_shutdown(ssl)
        }
        pump = nil
        bufferevent_free(bev)
    }

    private func handleReadable() {
        if let delegate {
            delegate.upstreamReadable(self)
        } else if let idlePool {
            // An idle pooled connection must not talk; whatever it says, it is done.
            idlePool.remove(self)
        }
    }

    private func handleDrained() {
        if let delegate { delegate.upstreamDrained(self) }
    }

    private func handleEvent(_ events: Int16) {
        let events = Int32(events)
        if events & Int32(BEV_EVENT_CONNECTED) != 0 {
            isConnected = true
            fd = bufferevent_getfd(bev)
            connectDeadline?.cancel()
            connectDeadline = nil
            if let ssl {
                resumedSession = SSL_session_reused(ssl) == 1
                onTLSHandshake?(resumedSession)
                onTLSHandshake = nil
            } else {
                // From here on the pump reads; the bufferevent keeps writing.
                bufferevent_disable(bev, Int16(EV_READ))
                let pump = SocketReadPump(
                    loop: loop, fd: fd, input: input, maxRead: SocketReadPump.maxResponseRead,
                    timeoutMilliseconds: readTimeoutMilliseconds, delegate: self)
                self.pump = pump
                if wantsReading { pump.enable() }
            }
            return
        }
        let failure: UpstreamFailure
        if events & Int32(BEV_EVENT_TIMEOUT) != 0 {
            failure = isConnected ? .timeout : .connect("connect timed out")
        } else if events & Int32(BEV_EVENT_ERROR) != 0 {
            failure = classifyError()
        } else {
            failure = .closed
        }
        report(failure)
    }

    /// Hands a failure to whoever listens: the exchange, the pool, or nobody yet (kept for later).
    private func report(_ failure: UpstreamFailure) {
        connectDeadline?.cancel()
        if let delegate {
            delegate.upstreamEnded(self, failure)
        } else if let idlePool {
            idlePool.remove(self)
        } else {
            earlyFailure = failure
        }
    }

    private func classifyError() -> UpstreamFailure {
        let dnsError = bufferevent_socket_get_dns_error(bev)
        if dnsError != 0 {
            return .dns(String(cString: evutil_gai_strerror(dnsError)))
        }
        if ssl != nil {
            var tlsErrors: [String] = []
            while true {
                let code = bufferevent_get_openssl_error(bev)
                if code == 0 { break }
                tlsErrors.append(OpenSSLError.describe(code))
            }
            if let ssl, !isConnected {
                let verify = SSL_get_verify_result(ssl)
                if verify != X509_V_OK {
                    return .tls(
                        "certificate verification failed: " + String(cString: X509_verify_cert_error_string(verify)))
                }
            }
            if !tlsErrors.isEmpty { return .tls(tlsErrors.joined(separator: "; ")) }
        }
        let code = errno
        let reason = code != 0 ? String(cString: strerror(code)) : "connection failed"
        return isConnected ? .reset(reason) : .connect(reason)
    }

    private static func dnsOrSocketError(_ bev: OpaquePointer) -> String {
        let dnsError = bufferevent_socket_get_dns_error(bev)
        if dnsError != 0 { return String(cString: evutil_gai_strerror(dnsError)) }
        return String(cString: strerror(errno))
    }
}
