import CLibevent
import PresigndHTTP1
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted client connection: the driver of its `ConnectionStateMachine`.
///
/// I/O callbacks become `ConnectionEvent`s; the machine decides, and `perform` carries out its actions. The
/// request side (`+Request`), the upstream side (`+Response`), local answers (`+LocalResponse`) and spooling
/// (`+Spool`) only move bytes and report what they saw. Everything runs on the owning worker's thread.
final class ClientConnection: SocketReadPumpDelegate {
    /// The worker owns its connections and closes them all before it goes.
    unowned let worker: Worker
    let bev: OpaquePointer
    let peer: SocketAddress
    /// The configuration the current request runs under; a reload reaches the connection between requests.
    var settings: ProxySettings
    var decoder: RequestDecoder
    var machine: ConnectionStateMachine
    /// The forwarded exchange in flight: what was sent upstream and what the access log needs.
    var exchange: Exchange?
    /// Method, log path and HTTP version of the request being handled (local answers need them).
    var request = RequestSummary.none
    /// Reads the socket in large pieces; the bufferevent only writes (see `SocketReadPump`).
    var pump: SocketReadPump?
    /// The client's address as text, formatted once per connection (logs, metrics).
    lazy var peerHost: String = peer.host
    /// Continues `settle` on the next loop iteration when one event moved enough.
    lazy var continuation = LoopTimer(loop: worker.loop) { [unowned self] in self.settle() }
    static let maxSettleRounds = 16
    /// Pipelined bytes buffered while a response runs before reading pauses.
    static let maxPipelinedBytes = 64 * 1024

    /// Events raised while actions run wait here, so each event's actions complete before the next is handled.
    private var pendingEvents: [ConnectionEvent] = []
    private var isHandlingEvents = false
    /// `processClientInput` is running (an action may ask for it again: the running loop carries on instead).
    var isDecodingInput = false
    /// The read timeout applied last, so a change of state re-arms the timer only when the kind changes.
    private var appliedReadTimeout: ClientReadTimeout?
    /// Whether `EvBuffer.flushNow` left the bufferevent's write event enabled.
    var isWriteEnabled = false

    /// The bufferevent's buffers and socket, fixed for its life.
    let input: OpaquePointer
    let output: OpaquePointer
    let fd: Int32

    init(worker: Worker, bev: OpaquePointer, peer: SocketAddress, settings: ProxySettings) {
        self.worker = worker
        self.bev = bev
        self.input = bufferevent_get_input(bev)!
        self.output = bufferevent_get_output(bev)!
        self.fd = bufferevent_getfd(bev)
        self.peer = peer
        self.settings = settings
        self.decoder = RequestDecoder(limits: Self.decoderLimits(settings))
        self.machine = ConnectionStateMachine(headerTimeoutMilliseconds: settings.limits.headerTimeoutMilliseconds)
        pendingEvents.reserveCapacity(4)
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(
            bev, nil,
            { _, context in
                guard let context else { return }
                Unmanaged<ClientConnection>.fromOpaque(context).takeUnretainedValue().settle()
            },
            { _, events, context in
                guard let context else { return }
                Unmanaged<ClientConnection>.fromOpaque(context).takeUnretainedValue().bufferEventDidEnd(events)
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
        appliedReadTimeout = .idle
        pump?.enable()
    }

    static func decoderLimits(_ settings: ProxySettings) -> DecoderLimits {
        var limits = DecoderLimits()
        limits.maxRequestLineBytes = settings.limits.maxRequestLineBytes
        limits.maxHeaderBytes = settings.limits.maxHeaderBytes
        limits.maxHeaderCount = settings.limits.maxHeaderCount
        return limits
    }

    /// Takes the worker's current configuration, between requests only: decoder limits and timeouts included.
    func applyCurrentSettings() {
        guard settings !== worker.settings, decoder.isIdle else { return }
        settings = worker.settings
        decoder = RequestDecoder(limits: Self.decoderLimits(settings))
        machine.headerTimeoutMilliseconds = settings.limits.headerTimeoutMilliseconds
        bufferevent_setwatermark(bev, Int16(EV_WRITE), settings.lowWatermark, 0)
        appliedReadTimeout = nil
    }

    var isClosed: Bool { machine.state == .closed }

    // MARK: Events

    /// Hands an event to the machine and performs its actions; events raised meanwhile are queued behind it.
    func handle(_ event: ConnectionEvent) {
        pendingEvents.append(event)
        guard !isHandlingEvents else { return }
        isHandlingEvents = true
        var index = 0
        while index < pendingEvents.count {
            let next = pendingEvents[index]
            index += 1
            for action in machine.handle(next) { perform(action) }
        }
        pendingEvents.removeAll(keepingCapacity: true)
        isHandlingEvents = false
    }

    private func perform(_ action: ConnectionAction) {
        switch action {
        case .sendContinue:
            EvBuffer.add(output, "HTTP/1.1 100 Continue\r\n\r\n")
        case .connectUpstream(let fresh):
            attachUpstream(fresh: fresh)
        case .sendSpooledRequest:
            sendSpooledRequest()
        case .writeResponseHead(let framing, let closing):
            writeResponseHead(framing: framing, closing: closing)
        case .finishResponseBody:
            EvBuffer.add(output, "0\r\n\r\n")
        case .releaseUpstream(let reusable):
            releaseUpstream(reusable: reusable)
        case .answer(let answer, let closing):
            writeAnswer(answer, closing: closing)
        case .endExchange(let completed):
            if let exchange {
                self.exchange = nil
                worker.exchangeEnded(exchange, completed: completed)
            }
        case .readNextRequest:
            request = .none
            processClientInput()
        case .closeWhenFlushed:
            pump?.disable()
            if EvBuffer.length(output) == 0 { handle(.outputFlushed) }
        case .close:
            tearDown(reset: false)
        case .reset:
            tearDown(reset: true)
        }
    }

    func pumpDidRead() {
        processClientInput()
        settle()
    }

    /// The read side ended: EOF, an error, or the read timeout (`BEV_EVENT_*` flags).
    func pumpDidEnd(_ events: Int16) {
        let events = Int32(events)
        if events & Int32(BEV_EVENT_TIMEOUT) != 0 {
            handle(.readTimedOut)
        } else if events & Int32(BEV_EVENT_EOF) != 0 {
            handle(.clientEnded(.endOfFile))
        } else {
            handle(.clientEnded(.aborted))
        }
        settle()
    }

    /// The bufferevent writes only: a timeout here is the write timeout, never a read one (bug a).
    private func bufferEventDidEnd(_ events: Int16) {
        if Int32(events) & Int32(BEV_EVENT_TIMEOUT) != 0 {
            handle(.writeTimedOut)
        } else {
            handle(.clientEnded(.aborted))
        }
        settle()
    }

    // MARK: Settling

    /// Runs after every event: writes both outputs directly, resumes a side paused for backpressure once the
    /// output it fills has drained, applies the state's read timeout, until nothing moves. Bounded per event so
    /// one fast transfer cannot starve the loop; the rest continues on a zero timer.
    func settle() {
        var rounds = 0
        while !isClosed {
            var moved = false
            if let exchange, let upstream = exchange.upstream {
                upstream.flush()
                if exchange.spool != nil && exchange.pendingPlan == nil, let spool = exchange.spool,
                    EvBuffer.length(upstream.output) <= settings.lowWatermark
                {
                    let before = spool.sent
                    pumpSpool()
                    moved = spool.sent != before
                }
            }
            guard !isClosed else { return }
            if let pump {
                let reading = pump.isEnabled
                if clientReadWanted(currentlyReading: reading) != reading {
                    if reading {
                        pump.disable()
                    } else {
                        pump.enable()
                        processClientInput()
                        moved = true
                    }
                }
            }
            guard !isClosed else { return }
            if EvBuffer.flushNow(bev, output: output, fd: fd, writeEnabled: &isWriteEnabled) == .empty
                && machine.state == .closingWhenFlushed
            {
                handle(.outputFlushed)
                return
            }
            if let upstream = exchange?.upstream {
                let reading = upstream.isReading
                let queued = EvBuffer.length(output)
                let wanted = machine.usesUpstream && backpressure.allowsReading(isReading: reading, queued: queued)
                if wanted != reading {
                    if reading {
                        upstream.disableReading()
                    } else {
                        upstream.enableReading()
                        processUpstreamInput()
                        moved = true
                    }
                }
            }
            guard !isClosed else { return }
            applyReadTimeout()
            guard moved else { return }
            rounds += 1
            if rounds >= Self.maxSettleRounds {
                continuation.schedule(milliseconds: 0)
                return
            }
        }
    }

    /// Whether the client's socket should be read now: the state wants its bytes, and neither the upstream's
    /// output (backpressure, with hysteresis between the watermarks) nor the pipelining allowance is full.
    private func clientReadWanted(currentlyReading: Bool) -> Bool {
        guard machine.wantsClientInput else { return false }
        if machine.decodesClientInput, let exchange, exchange.spool == nil, let upstream = exchange.upstream {
            return backpressure.allowsReading(isReading: currentlyReading, queued: EvBuffer.length(upstream.output))
        }
        return !pipelineIsFull
    }

    /// A complete request waits for its response and the client keeps sending: stop reading at some point.
    var pipelineIsFull: Bool {
        !machine.decodesClientInput && EvBuffer.length(input) > Self.maxPipelinedBytes
    }

    var backpressure: Backpressure { Backpressure(low: settings.lowWatermark, high: settings.highWatermark) }

    private func applyReadTimeout() {
        let wanted = machine.clientReadTimeout
        guard wanted != appliedReadTimeout else { return }
        appliedReadTimeout = wanted
        let milliseconds: Int
        switch wanted {
        case .idle: milliseconds = settings.limits.idleTimeoutMilliseconds
        case .header: milliseconds = settings.limits.headerTimeoutMilliseconds
        case .body: milliseconds = settings.limits.bodyIdleTimeoutMilliseconds
        case .none: milliseconds = 0
        }
        pump?.setTimeout(milliseconds: milliseconds)
    }

    /// Frees both sides. `reset`: `SO_LINGER` 0 first, so the client sees a reset rather than an orderly close.
    private func tearDown(reset: Bool) {
        if let exchange {
            self.exchange = nil
            exchange.upstream?.free()
            exchange.upstream = nil
            worker.exchangeEnded(exchange, completed: false)
        }
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        continuation.cancel()
        pump = nil
        bufferevent_free(bev)
        worker.connectionClosed(self)
    }

    /// Closes the connection now (worker shutdown): an exchange in flight is cut short.
    func close() {
        handle(.clientEnded(.aborted))
    }

    /// The worker is draining: an idle connection closes now, a busy one after its response.
    func drain() {
        handle(.drain)
        settle()
    }
}

/// What local answers need of the request being handled.
struct RequestSummary {
    var method: String
    /// The path without the query string (access log, `<Resource>` of an S3 error).
    var logPath: String
    var isHTTP10: Bool

    static let none = RequestSummary(method: "GET", logPath: "", isHTTP10: false)
}
