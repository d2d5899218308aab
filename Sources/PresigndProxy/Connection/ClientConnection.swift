import PresigndConfig
import PresigndHTTP1
import PresigndIO
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted client connection: the driver of its `ConnectionStateMachine`.
///
/// I/O callbacks become `ConnectionEvent`s; the machine decides, and `perform` carries out its actions. The
/// request side (`+Request`), the upstream side (`+Response`), local answers (`+LocalResponse`) and spooling
/// (`+Spool`) only move bytes and report what they saw. Everything runs on the owning worker's thread.
final class ClientConnection: StreamDelegate {
    /// The worker owns its connections and closes them all before it goes; the reference back is strong (an
    /// `unowned` one costs a check of the worker's unowned count on every use, several per event) and the cycle
    /// ends when the worker drops a closed connection (`Worker.connectionClosed`).
    let worker: Worker
    /// The client's socket: reads in large pieces, writes directly (`SocketStream`).
    let stream: SocketStream
    let peer: SocketAddress
    /// Who is asking, from the socket: `SO_PEERCRED` on unix sockets, the source address on TCP (issue 19 §5).
    let principal: Principal
    /// The configuration the current request runs under; a reload reaches the connection between requests.
    var settings: ProxySettings
    var decoder: RequestDecoder
    var machine: ConnectionStateMachine
    /// The forwarded exchange in flight: what was sent upstream and what the access log needs.
    var exchange: Exchange?
    /// The slices of a cached answer decided but not written yet (issue 23).
    var openedSlices: OpenedSlices?
    /// The rest of a cached answer too large to queue at once, and what its log line needs once it is all queued.
    var cachedBodySender: CachedBodySender?
    /// A request waiting for another request's cache fill, kept to be decided again (`cacheWaitEnded`).
    var pendingCacheRead: PendingCacheRead?
    /// Method, log path and HTTP version of the request being handled (local answers need them).
    var request = RequestSummary.none
    /// The client's address as text, formatted once per connection (logs, metrics).
    lazy var peerHost: String = peer.host
    /// The principal as the access log shows it, formatted once per connection.
    lazy var principalName: String = principal.description
    /// The principal's bounded metric label (`unix`, `tcp`), once per connection.
    lazy var principalLabel: String = principal.metricLabel
    /// Continues `settle` on the next loop iteration when one event moved enough.
    lazy var continuation = try? LoopTimer(loop: worker.loop) { [unowned self] in self.settle() }
    /// The backoff before a retry (issue 21 §3), made the first time one is needed.
    var retryTimer: LoopTimer?
    static let maxSettleRounds = 16
    /// Pipelined bytes buffered while a response runs before reading pauses.
    static let maxPipelinedBytes = 64 * 1024

    /// Events raised while actions run wait here, so each event's actions complete before the next is handled.
    private var pendingEvents: [ConnectionEvent] = []
    /// Whether `handle` is running, and whether events wait behind the current one (plain data: the hot path
    /// reads it instead of the array).
    private var dispatch = EventDispatch.idle
    /// `processClientInput` is running (an action may ask for it again: the running loop carries on instead).
    var isDecodingInput = false
    /// `processClientInput` stopped because an event it raised waits behind the current one (the machine has not
    /// seen it yet, so its state cannot say what to decode next): decoding resumes once the queue is done.
    var resumesDecodingAfterEvents = false
    /// The next pipelined request waits until the answers already queued for the client drain below the low
    /// watermark: a client that pipelines requests for cached objects and reads nothing would otherwise have
    /// every answer, and every slice file it holds open, queued at once.
    var decodingWaitsForOutput = false
    /// An event is being handled: one raised now waits in the queue.
    var isHandlingEvent: Bool { dispatch != .idle }
    /// The read timeout applied last, so a change of state re-arms the timer only when the kind changes.
    private var appliedReadTimeout: ClientReadTimeout?

    /// The stream's buffers, fixed for its life.
    let input: IOBuffer
    let output: IOBuffer

    /// Request bodies are read up to 256 KiB at a time: larger reads gained nothing for uploads and held more
    /// memory while a slow upstream took the body.
    static let maxRead = 256 * 1024

    init(worker: Worker, stream: SocketStream, peer: SocketAddress, principal: Principal, settings: ProxySettings) {
        self.worker = worker
        self.principal = principal
        self.stream = stream
        self.input = stream.input
        self.output = stream.output
        self.peer = peer
        self.settings = settings
        self.decoder = RequestDecoder(limits: Self.decoderLimits(settings))
        self.machine = ConnectionStateMachine(headerTimeoutMilliseconds: settings.limits.headerTimeoutMilliseconds)
        stream.delegate = self
        stream.lowWatermark = settings.lowWatermark
        appliedReadTimeout = .idle
        stream.setTimeouts(
            readMilliseconds: settings.limits.idleTimeoutMilliseconds,
            writeMilliseconds: settings.limits.bodyIdleTimeoutMilliseconds)
        stream.enableReading()
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
        var next = machine
        next.headerTimeoutMilliseconds = settings.limits.headerTimeoutMilliseconds
        machine = next
        stream.lowWatermark = settings.lowWatermark
        appliedReadTimeout = nil
    }

    var isClosed: Bool { machine.state == .closed }

    // MARK: Events

    /// Hands an event to the machine and performs its actions; events raised meanwhile (an action that decodes the
    /// next request, say) are queued behind it, so each event's actions complete before the next is handled. The
    /// actions go into the worker's scratch array: an event allocates nothing, and an idle connection holds none.
    func handle(_ event: ConnectionEvent) {
        guard dispatch == .idle else {
            var events = pendingEvents  // taken out and put back: no access to `pendingEvents` spans a call
            pendingEvents = []
            events.append(event)
            pendingEvents = events
            dispatch = .runningWithQueuedEvents
            return
        }
        dispatch = .running
        var actions = worker.takeActionScratch()
        run(event, &actions)
        if dispatch == .runningWithQueuedEvents {
            var queued = 0
            while queued < pendingEvents.count {
                let next = pendingEvents[queued]
                queued += 1
                run(next, &actions)
            }
            pendingEvents = []
        }
        worker.returnActionScratch(consume actions)
        dispatch = .idle
        if resumesDecodingAfterEvents {
            resumesDecodingAfterEvents = false
            processClientInput()
        }
    }

    /// One event through the machine, then its actions. The machine's state is plain data: it is copied out and
    /// back, so `machine` is never held across a call (its accesses need no run-time exclusivity check).
    private func run(_ event: borrowing ConnectionEvent, _ actions: inout [ConnectionAction]) {
        var next = machine
        next.handle(event, into: &actions)
        machine = next
        for action in actions { perform(action) }
        // Emptied from the end, keeping the buffer: `removeAll(keepingCapacity:)` goes through the generic
        // `replaceSubrange` (about 140 instructions a call, four calls a request); a request has one to three.
        while actions.popLast() != nil {}
    }

    private func perform(_ action: ConnectionAction) {
        switch action {
        case .sendContinue:
            write(LocalResponse.interimContinue)
        case .connectUpstream(let fresh):
            attachUpstream(fresh: fresh)
        case .scheduleRetry(let milliseconds):
            scheduleRetry(milliseconds: milliseconds)
        case .sendSpooledRequest:
            sendSpooledRequest()
        case .writeResponseHead(let framing, let closing):
            writeResponseHead(framing: framing, closing: closing)
        case .finishResponseBody:
            write("0\r\n\r\n")
        case .passOnHeldAnswer:
            passOnHeldAnswer()
        case .stopWaitingForCache:
            settleCacheWait(mayWait: false)
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
            stream.disableReading()
            if output.isEmpty { handle(.outputFlushed) }
        case .close:
            tearDown(reset: false)
        case .reset:
            tearDown(reset: true)
        }
    }

    func streamReadable() {
        processClientInput()
        settle()
    }

    /// The stream wrote enough of its output: move on (resume a paused upstream, close when flushed).
    func streamDrained() {
        settle()
    }

    func streamEnded(_ end: StreamEnd) {
        switch end {
        case .endOfFile: handle(.clientEnded(.endOfFile))
        case .reset, .failed: handle(.clientEnded(.aborted))
        case .readTimeout: handle(.readTimedOut)
        case .writeTimeout: handle(.writeTimedOut)
        }
        settle()
    }

    /// Appends to the client's output; memory running out ends the exchange as a failure.
    func write(_ bytes: [UInt8]) {
        do { try output.append(bytes) } catch { handle(.failed(.internalError("\(error)"))) }
    }

    func write(_ text: StaticString) {
        do { try output.append(text) } catch { handle(.failed(.internalError("\(error)"))) }
    }

    /// `hex(size)\r\n` (RFC 9112 §7.1), written by the codec's encoder.
    func writeChunkHeader(size: Int) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(18)
        HTTPEncoder.chunkHeader(size: size, into: &bytes)
        write(bytes)
    }

    /// Moves `count` bytes between buffers (whole chains without copying).
    func moveBytes(from source: IOBuffer, to destination: IOBuffer, count: Int) {
        do { _ = try source.move(to: destination, count: count) } catch {
            handle(.failed(.internalError("\(error)")))
        }
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
                    upstream.output.count <= settings.lowWatermark
                {
                    let before = spool.sent
                    pumpSpool()
                    moved = spool.sent != before
                }
            }
            guard !isClosed else { return }
            let reading = stream.isReading
            if clientReadWanted(currentlyReading: reading) != reading {
                if reading {
                    stream.disableReading()
                } else {
                    stream.enableReading()
                    processClientInput()
                    moved = true
                }
            }
            guard !isClosed else { return }
            stream.flush()
            if cachedBodySender != nil && output.count <= settings.lowWatermark && pumpCachedBody() {
                moved = true
                stream.flush()
            }
            if decodingWaitsForOutput && output.count <= settings.lowWatermark {
                decodingWaitsForOutput = false
                processClientInput()
                moved = true
            }
            guard !isClosed else { return }
            if output.isEmpty && machine.state == .closingWhenFlushed {
                handle(.outputFlushed)
                return
            }
            if let exchange, let upstream = exchange.upstream {
                let reading = upstream.isReading
                let queued = output.count
                // A fill waiting for the cache's write queue holds the upstream (arranging its wake if needed).
                let paused = exchange.cacheFill.map { $0.isPaused && !resumeCacheFill($0) } ?? false
                let wanted =
                    machine.usesUpstream && !paused
                    && backpressure.allowsReading(isReading: reading, queued: queued)
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
                continuation?.fireSoon()
                return
            }
        }
    }

    /// Whether the client's socket should be read now: the state wants its bytes, and neither the upstream's
    /// output (backpressure, with hysteresis between the watermarks) nor the pipelining allowance is full.
    private func clientReadWanted(currentlyReading: Bool) -> Bool {
        guard machine.wantsClientInput else { return false }
        if machine.decodesClientInput, let exchange, exchange.spool == nil, let upstream = exchange.upstream {
            return backpressure.allowsReading(isReading: currentlyReading, queued: upstream.output.count)
        }
        return !pipelineIsFull
    }

    /// A complete request waits for its response and the client keeps sending: stop reading at some point.
    var pipelineIsFull: Bool {
        (!machine.decodesClientInput || decodingWaitsForOutput) && input.count > Self.maxPipelinedBytes
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
        stream.setTimeouts(
            readMilliseconds: milliseconds, writeMilliseconds: settings.limits.bodyIdleTimeoutMilliseconds)
    }

    /// Frees both sides. `reset`: `SO_LINGER` 0 first, so the client sees a reset rather than an orderly close.
    private func tearDown(reset: Bool) {
        if let exchange {
            self.exchange = nil
            exchange.upstream?.free()
            exchange.upstream = nil
            worker.exchangeEnded(exchange, completed: false)
        }
        continuation?.cancel()
        retryTimer?.cancel()
        logCutCachedAnswer(code: "ResponseCut")
        pendingCacheRead = nil
        if reset { stream.reset() } else { stream.close() }
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

/// Where `ClientConnection.handle` is: not running, running one event, or running with more queued behind it.
enum EventDispatch {
    case idle
    case running
    case runningWithQueuedEvents
}

/// What local answers need of the request being handled.
struct RequestSummary {
    var method: String
    /// The request target as sent; its path is worked out only when a local answer needs it (most requests get
    /// their path from the rewriter's plan instead).
    var target: String
    var isHTTP10: Bool
    /// How the request's body is delimited and whether the client keeps the connection, as the decoder read the
    /// head: copied here once, so the request path reads the decoder (a run-time checked access) only once.
    var framing: BodyFraming
    var clientKeepAlive: Bool
    private var resolvedPath: String?

    init(method: String, target: String, isHTTP10: Bool, framing: BodyFraming = .none, clientKeepAlive: Bool = true) {
        self.method = method
        self.target = target
        self.isHTTP10 = isHTTP10
        self.framing = framing
        self.clientKeepAlive = clientKeepAlive
    }

    /// The path without the query string (access log, `<Resource>` of an S3 error).
    var logPath: String {
        get { resolvedPath ?? RequestRewriter.resource(of: target) }
        set { resolvedPath = newValue }
    }

    static let none = RequestSummary(method: "GET", target: "", isHTTP10: false)
}
