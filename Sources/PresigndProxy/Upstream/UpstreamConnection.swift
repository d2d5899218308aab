import PresigndIO

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

/// One connection to an upstream: resolved and connected by a `Connector`, then a `SocketStream`, plain or TLS.
/// Lives in its worker's pool while idle and is owned by one client exchange while busy.
final class UpstreamConnection: StreamDelegate {
    /// Where the connection is in its life.
    private enum State {
        /// Resolving and connecting; what the owner writes meanwhile waits in `pending`.
        case connecting(Connector)
        /// TLS: the handshake runs; bytes written go out after it.
        case handshaking(SocketStream)
        case open(ByteStream)
        case closed
    }

    let upstreamIndex: Int
    private var state: State {
        didSet { (input, output) = buffers(of: state) }
    }
    /// What arrived from the upstream and is not consumed yet (an always-empty buffer until open).
    private(set) var input: IOBuffer
    /// What waits to go to the upstream (while connecting, the head and first body bytes wait in `pending`).
    /// Both are kept beside `state` as plain values (an `IOBuffer` is a pointer): reading them, several times a
    /// request, costs no reference counting, where taking the stream out of `state` retains and releases it.
    private(set) var output: IOBuffer
    private let loop: EventLoop
    private let target: UpstreamTarget
    /// Kept alive here: the SSL's ex_data points at it unretained.
    private let sessions: TLSSessionStore
    /// The output while connecting (the head and the first body bytes wait here), and an always-empty input.
    private let pending: OwnedIOBuffer
    private let noInput: OwnedIOBuffer
    /// Served at least one exchange before this one (a stale keep-alive may fail with no byte).
    var isReused = false
    /// Who hears the connection's events: the client connection whose exchange uses it, or the pool while it is
    /// idle (any byte, EOF or timeout then ends it). Each sets itself and is replaced or cleared (`free`) before it
    /// goes: the pool's idle list keeps the connection alive, and a client connection frees its upstream first.
    var delegate: UpstreamConnectionDelegate? {
        get { delegateSlot?.delegate }
        set {
            // Swapped in, the old reference let go after the store (as `StreamOwner` does for streams): the
            // property's exclusivity is then checked statically, not at run time on each of its uses.
            var replacement = newValue.map(DelegateSlot.init)
            swap(&replacement, &delegateSlot)
        }
    }
    private struct DelegateSlot { unowned let delegate: UpstreamConnectionDelegate }
    private var delegateSlot: DelegateSlot?
    /// Called once when the TLS handshake completes, with whether it resumed a session (metrics).
    var onTLSHandshake: ((Bool) -> Void)?
    private(set) var isReading = true
    private var timeouts: (read: Int, write: Int)
    private var lowWatermark: Int

    static let maxRead = 512 * 1024

    /// Starts connecting (name resolution, TCP, then TLS when configured).
    init(
        loop: EventLoop, target: UpstreamTarget, upstreamIndex: Int, sessions: TLSSessionStore, lowWatermark: Int
    ) throws(ProxyError) {
        self.loop = loop
        self.target = target
        self.upstreamIndex = upstreamIndex
        self.sessions = sessions
        self.lowWatermark = lowWatermark
        self.timeouts = (target.firstByteTimeoutMilliseconds, target.connectTimeoutMilliseconds)
        do {
            pending = try OwnedIOBuffer()
            noInput = try OwnedIOBuffer()
        } catch {
            throw .internalError("\(error)")
        }
        input = noInput.buffer
        output = pending.buffer
        state = .closed
        let connector: Connector
        do {
            connector = try Connector(
                loop: loop, host: target.host, port: target.port, timeoutMilliseconds: target.connectTimeoutMilliseconds
            ) { [unowned self] result in self.connected(result) }
            // `unowned`, not `weak`: the connector (and the TLS stream's handshake callback below) lives in `state`
            // and is cancelled in `free`, which `deinit` calls, so neither calls back once self is gone; a weak
            // capture would give every upstream connection a side table and slow each retain and release of it.
        } catch {
            throw .upstreamConnect("\(error)")
        }
        state = .connecting(connector)
    }

    deinit {
        free()
    }

    var isConnected: Bool {
        if case .open = state { return true }
        return false
    }

    private func buffers(of state: State) -> (input: IOBuffer, output: IOBuffer) {
        switch state {
        case .open(let stream): (stream.input, stream.output)
        case .handshaking(let stream): (noInput.buffer, stream.output)
        case .connecting, .closed: (noInput.buffer, pending.buffer)
        }
    }

    /// Sets the read (first byte / idle) and write timeouts (they apply once connected).
    func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int) {
        timeouts = (readMilliseconds, writeMilliseconds)
        if case .open(let stream) = state {
            stream.setTimeouts(readMilliseconds: readMilliseconds, writeMilliseconds: writeMilliseconds)
        }
    }

    func enableReading() {
        isReading = true
        if case .open(let stream) = state { stream.enableReading() }
    }

    func disableReading() {
        isReading = false
        if case .open(let stream) = state { stream.disableReading() }
    }

    /// Sends `bytes` after whatever waits: at once on an open plain stream with nothing queued
    /// (`SocketStream.write`), else queued (while connecting, in `pending`).
    func write(_ bytes: [UInt8]) throws(IOError) {
        if case .open(let stream) = state { try stream.write(bytes) } else { try output.append(bytes) }
    }

    /// Writes pending output now where the stream can.
    func flush() {
        if case .open(let stream) = state { stream.flush() }
    }

    /// Closes the connection (a TLS stream says close_notify first, so its session stays resumable).
    func free() {
        switch state {
        case .connecting(let connector): connector.cancel()
        case .handshaking(let stream): stream.close()
        case .open(let stream): stream.close()
        case .closed: break
        }
        state = .closed
        delegate = nil
    }

    // MARK: Connecting

    private func connected(_ result: Result<Int32, ConnectFailure>) {
        guard case .connecting = state else {
            if case .success(let fd) = result { close(fd) }
            return
        }
        switch result {
        case .failure(let failure):
            state = .closed
            switch failure {
            case .dns(let reason): report(.dns(reason))
            case .connect(let reason): report(.connect(reason))
            case .timeout: report(.connect("timed out resolving or connecting to the upstream"))
            }
        case .success(let fd):
            if target.usesTLS, let tls = target.tls {
                startTLS(fd: fd, context: tls)
            } else {
                do {
                    open(try SocketStream(loop: loop, fd: fd, maxRead: Self.maxRead))
                } catch {
                    state = .closed
                    report(.connect("\(error)"))
                }
            }
        }
    }

    private func startTLS(fd: Int32, context: TLSClientContext) {
        guard let ssl = context.makeSSL(host: target.host, sessions: sessions) else {
            close(fd)
            state = .closed
            report(.tls("SSL_new failed"))
            return
        }
        do {
            let stream = try SocketStream(
                loop: loop, connectedFD: fd, ssl: ssl, maxRead: Self.maxRead, maxWrite: 256 * 1024
            ) { [unowned self] result in self.handshakeEnded(result) }
            stream.delegate = self
            // The handshake has the rest of the connect timeout's budget, as the whole setup did before.
            stream.setTimeouts(
                readMilliseconds: target.connectTimeoutMilliseconds,
                writeMilliseconds: target.connectTimeoutMilliseconds)
            _ = try? stream.output.append(takingAllOf: pending.buffer)
            stream.enableReading()
            state = .handshaking(stream)
        } catch {
            state = .closed
            report(.tls("\(error)"))
        }
    }

    private func handshakeEnded(_ result: Result<Bool, StreamEnd>) {
        guard case .handshaking(let stream) = state else { return }
        switch result {
        case .success(let resumed):
            onTLSHandshake?(resumed)
            onTLSHandshake = nil
            open(stream)
        case .failure(let end):
            stream.close()
            state = .closed
            report(.tls(end.description))
        }
    }

    private func open(_ stream: ByteStream) {
        stream.delegate = self
        stream.lowWatermark = lowWatermark
        do {
            try stream.output.append(takingAllOf: pending.buffer)
        } catch {
            stream.close()
            state = .closed
            report(.connect("\(error)"))
            return
        }
        state = .open(stream)
        stream.setTimeouts(readMilliseconds: timeouts.read, writeMilliseconds: timeouts.write)
        if isReading { stream.enableReading() } else { stream.disableReading() }
        stream.flush()
        // What waited while connecting may all be out now: the owner may have more to send (a spool, a body
        // paused for backpressure), and no drained callback follows a write made inside `flush()`.
        delegate?.upstreamDrained(self)
    }

    // MARK: Stream events

    func streamReadable() {
        delegate?.upstreamReadable(self)
    }

    func streamDrained() {
        delegate?.upstreamDrained(self)
    }

    func streamEnded(_ end: StreamEnd) {
        if case .handshaking = state { return }  // the handshake result reports it
        let failure: UpstreamFailure
        switch end {
        case .endOfFile: failure = .closed
        case .reset: failure = .reset(end.description)
        case .readTimeout, .writeTimeout: failure = .timeout
        case .failed(let reason): failure = target.usesTLS ? .tls(reason) : .reset(reason)
        }
        report(failure)
    }

    /// Hands a failure to whoever listens: the exchange or the pool.
    private func report(_ failure: UpstreamFailure) {
        delegate?.upstreamEnded(self, failure)
    }
}
