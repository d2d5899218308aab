import CLibevent
import PresigndHTTP1
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted client connection and its in-order exchanges (keep-alive, pipelining).
///
/// libevent callbacks land here and only translate events into calls on the request side
/// (`ClientConnection+Request`) and the response side (`ClientConnection+Response`). Everything
/// runs on the owning worker's thread.
final class ClientConnection: SocketReadPumpDelegate {
    enum RequestPhase { case head, body, done }
    enum ResponsePhase { case none, head, body }

    /// The worker owns its connections and closes them all before it goes: `unowned(unsafe)` spares the
    /// atomic check an `unowned` reference costs on every access (several per request).
    unowned(unsafe) let worker: Worker
    /// `worker` for the per-request path: calls through it skip the retain and release around each use.
    let borrowedWorker: Borrowed<Worker>
    let bev: OpaquePointer
    let peer: SocketAddress
    /// The configuration this connection's current exchange runs under; a reload reaches the
    /// connection between requests (`requestCycleEnded`), never mid-exchange.
    var settings: ProxySettings {
        didSet { watermarks = (settings.lowWatermark, settings.highWatermark) }
    }
    /// `settings`' output watermarks, read several times per request: a stored copy reads without retaining
    /// `settings`.
    private(set) var watermarks: (low: Int, high: Int)
    var decoder: RequestDecoder

    var requestPhase: RequestPhase = .head
    var responsePhase: ResponsePhase = .none
    /// The exchange's upstream side, while one is in flight.
    var exchange: Exchange? {
        didSet { borrowedExchange = exchange.map(Borrowed.init) }
    }
    /// `exchange` for reads that cannot end it (no retain and release around them).
    private(set) var borrowedExchange: Borrowed<Exchange>?
    /// Close once the current response is flushed (no keep-alive, unread body, draining).
    var closeAfterResponse = false
    private(set) var isClosed = false
    /// Reading from the client is paused because the upstream's output is full.
    var clientReadPaused = false
    /// Reading from the upstream is paused because our output to the client is full.
    var upstreamReadPaused = false
    /// When the first byte of the current head arrived (slowloris guard), ms.
    var headStartedAt: Int?
    /// The read timeout is the header timeout (set once a head arrives in pieces).
    var isHeadTimeoutSet = false
    var isFlushingToClose = false
    /// Whether `EvBuffer.flushNow` left the bufferevent's write event enabled.
    var isWriteEnabled = false
    var isProcessingInput = false
    /// Reads the socket in large pieces; the bufferevent only writes (see `SocketReadPump`).
    var pump: SocketReadPump? {
        didSet { borrowedPump = pump.map(Borrowed.init) }
    }
    /// `pump` for calls on the request path (no retain and release around each).
    private var borrowedPump: Borrowed<SocketReadPump>?
    /// The client's address as text, formatted once per connection (logs, metrics).
    lazy var peerHost: String = peer.host
    /// Continues `settle` on the next loop iteration when one event moved enough.
    lazy var continuation = LoopTimer(loop: worker.loop) { [unowned self] in self.settle() }
    static let maxSettleRounds = 16

    /// The bufferevent's buffers and socket, fixed for its life (read once, not per use).
    let input: OpaquePointer
    let output: OpaquePointer
    let fd: Int32

    init(worker: Worker, bev: OpaquePointer, peer: SocketAddress, settings: ProxySettings) {
        self.worker = worker
        self.borrowedWorker = Borrowed(worker)
        self.bev = bev
        self.input = bufferevent_get_input(bev)!
        self.output = bufferevent_get_output(bev)!
        self.fd = bufferevent_getfd(bev)
        self.peer = peer
        self.settings = settings
        self.watermarks = (settings.lowWatermark, settings.highWatermark)
        var limits = DecoderLimits()
        limits.maxRequestLineBytes = settings.limits.maxRequestLineBytes
        limits.maxHeaderBytes = settings.limits.maxHeaderBytes
        limits.maxHeaderCount = settings.limits.maxHeaderCount
        self.decoder = RequestDecoder(limits: limits)
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(
            bev,
            { _, context in
                guard let context else { return }
                Unmanaged<ClientConnection>.fromOpaque(context).takeUnretainedValue().handleReadable()
            },
            { _, context in
                guard let context else { return }
                Unmanaged<ClientConnection>.fromOpaque(context).takeUnretainedValue().handleDrained()
            },
            { _, events, context in
                guard let context else { return }
                Unmanaged<ClientConnection>.fromOpaque(context).takeUnretainedValue().pumpDidEnd(events)
            }, context)
        bufferevent_setwatermark(bev, Int16(EV_WRITE), settings.lowWatermark, 0)
        bufferevent_set_max_single_write(bev, SocketReadPump.maxResponseRead)
        var write = timeValue(milliseconds: settings.limits.bodyIdleTimeoutMilliseconds)
        bufferevent_set_timeouts(bev, nil, &write)
        // Both directions are driven by hand: the pump reads, `settle` writes (see EvBuffer.flushNow).
        bufferevent_disable(bev, Int16(EV_READ | EV_WRITE))
        pump = SocketReadPump(
            loop: worker.loop, fd: fd, input: input, maxRead: SocketReadPump.maxRequestRead,
            timeoutMilliseconds: settings.limits.idleTimeoutMilliseconds, delegate: self)
        borrowedPump = pump.map(Borrowed.init)  // observers do not run in an initializer
        pump?.enable()
    }

    func setReadTimeout(_ milliseconds: Int) {
        borrowedPump?.with { $0.setTimeout(milliseconds: milliseconds) }
    }

    func pauseClientReading() {
        borrowedPump?.with { $0.disable() }
    }

    func resumeClientReading() {
        borrowedPump?.with { $0.enable() }
    }

    // MARK: libevent events

    func pumpDidRead() {
        processClientInput()
        settle()
    }

    func pumpDidEnd(_ events: Int16) {
        handleEvent(events)
        settle()
    }

    private func handleReadable() {
        processClientInput()
        settle()
    }

    private func handleDrained() {
        if isFlushingToClose {
            if EvBuffer.length(output) == 0 { close() }
            return
        }
        settle()
    }

    /// Runs after every event: writes both outputs directly and resumes a side that was paused
    /// for backpressure once the output it fills has drained, until nothing moves. Bounded per
    /// event so one fast transfer cannot starve the loop; the rest continues on a zero timer.
    func settle() {
        var rounds = 0
        let lowWatermark = watermarks.low
        while !isClosed {
            var moved = false
            // Borrowed: flushing and measuring cannot end the exchange; what follows may, and retains it.
            // nil unless the upstream's output drained below the low watermark; then whether a spool feeds it.
            let spoolingIfDrained = borrowedExchange?.with { exchange -> Bool? in
                let drained = exchange.borrowedUpstream?.with { upstream in
                    upstream.flush()
                    return EvBuffer.length(upstream.output) <= lowWatermark
                }
                return drained == true ? exchange.spool != nil && exchange.pendingPlan == nil : nil
            }
            if let spooling = spoolingIfDrained {
                if spooling, let spool = exchange?.spool {
                    let before = spool.sent
                    pumpSpool()
                    moved = spool.sent != before
                } else if clientReadPaused {
                    clientReadPaused = false
                    resumeClientReading()
                    processClientInput()
                    moved = true
                }
            }
            guard !isClosed else { return }
            if EvBuffer.flushNow(bev, output: output, fd: fd, writeEnabled: &isWriteEnabled) == .empty
                && isFlushingToClose
            {
                close()
                return
            }
            if upstreamReadPaused && EvBuffer.length(output) <= lowWatermark, let exchange {
                upstreamReadPaused = false
                exchange.upstream?.enableReading()
                processUpstreamInput()
                moved = true
            }
            guard moved else { return }
            rounds += 1
            if rounds >= Self.maxSettleRounds {
                continuation.schedule(milliseconds: 0)
                return
            }
        }
    }

    private func handleEvent(_ events: Int16) {
        let events = Int32(events)
        if events & Int32(BEV_EVENT_TIMEOUT) != 0 {
            if requestPhase == .head && exchange == nil {
                if headStartedAt != nil || EvBuffer.length(input) > 0 {
                    respondLocally(error: .requestTimeout, method: "GET", resource: "", closing: true)
                } else {
                    close()  // idle keep-alive connection
                }
            } else {
                // A stalled body in either direction: nothing sane can be answered mid-stream.
                close()
            }
            return
        }
        if events & Int32(BEV_EVENT_EOF) != 0, exchange != nil, requestPhase == .done {
            // Half-close after a complete request (shutdown(SHUT_WR)): still answer it, then close.
            closeAfterResponse = true
            pauseClientReading()
            return
        }
        // EOF or error: the client is gone; drop any upstream side (never pooled).
        close()
    }

    /// Closes both sides now. Idempotent.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let exchange {
            exchange.upstream?.free()
            exchange.upstream = nil
            worker.exchangeEnded(exchange, completed: false)
            self.exchange = nil
        }
        pump = nil
        bufferevent_free(bev)
        worker.connectionClosed(self)
    }

    /// Closes after everything written so far reaches the client.
    func closeWhenFlushed() {
        pauseClientReading()
        if EvBuffer.length(output) == 0 {
            close()
        } else {
            isFlushingToClose = true
            bufferevent_setwatermark(bev, Int16(EV_WRITE), 0, 0)
        }
    }
}
