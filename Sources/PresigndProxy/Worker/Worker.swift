import PresigndConfig
import PresigndIO
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// One event-loop thread: its listeners, client connections, upstream pools and signers
/// (DESIGN §2: nothing on the hot path is shared between threads).
final class Worker {
    let index: Int
    let loop: EventLoop
    let logger: Logger
    let metrics: WorkerMetrics
    private(set) var settings: ProxySettings
    private(set) var listeners: [Listener] = []
    /// Failed accepts (descriptor ceiling) are logged at most once a second, with a count: the listener backs off
    /// by itself.
    var acceptErrorLog = LogRateLimiter()
    /// Whether a listener is paused after a failed accept (for `/readyz`).
    var pausedListeners = 0
    private var connections: [ObjectIdentifier: ClientConnection] = [:]
    private var pools: [UpstreamPool] = []
    private var signers: [Signer?] = []
    /// Per upstream index: why `signers` has no signer there, for the 503 (refreshing credentials only).
    private var signerProblems: [String?] = []
    /// What the daemon last published for each refreshing upstream, by name; kept across reloads.
    private var fetchedCredentials: [String: UpstreamCredentialState] = [:]
    /// Per upstream index: its slot in `metrics` (resolved once per configuration).
    private(set) var metricSlots: [Int] = []
    private(set) var isDraining = false
    private var requestCounter: UInt64 = 0
    private var headScratch: [UInt8] = []
    /// The actions of the event a connection is handling (`ClientConnection.handle`), lent out and given back.
    private var actionScratch: [ConnectionAction] = []
    /// A sent signed head's buffer, empty, for the next one (`takeSignedHeadBuffer`).
    private var spareSignedHead: [UInt8] = []
    private var lastSigningDate: AmzDate?
    private let requestIDPrefix: String
    private var control: CrossThreadEvent?
    /// How a cache fill on any thread wakes this worker's connections that wait for it.
    private(set) var cacheWaker: CacheWaker?
    private var pendingSettings: ProxySettings?
    private let mailbox = Mailbox()

    /// `max_spool_total`, shared by every worker.
    let spoolBudget: SpoolBudget
    /// Every upstream's clock offset, shared by every worker (issue 21 §4).
    let clocks: UpstreamClocks
    /// Per upstream index: its clock (resolved once per configuration).
    private(set) var upstreamClocks: [UpstreamClock] = []
    /// Retries this worker may still make (`retry_budget`, issue 21 §3).
    var retryBudget = RetryBudget(retries: 0)
    /// Per upstream index: the loop second of the last `Date` read, so a busy upstream's `Date` is read once a
    /// second rather than on every response.
    var lastClockSample: [Int] = []
    /// Checks head deadlines and body rates (`Worker+SlowPeers.swift`).
    var slowPeerSweep: LoopTimer?

    init(
        index: Int, settings: ProxySettings, logger: Logger, metrics: WorkerMetrics,
        spoolBudget: SpoolBudget = SpoolBudget(limit: Int.max), clocks: UpstreamClocks = UpstreamClocks()
    ) throws(StartupError) {
        self.index = index
        self.spoolBudget = spoolBudget
        self.clocks = clocks
        do {
            self.loop = try EventLoop(lockless: true)
        } catch {
            throw StartupError(error)
        }
        self.logger = logger
        self.metrics = metrics
        self.settings = settings
        // 7 random hex digits + 2 for the worker + 6 for the counter: 15 characters, which Swift keeps
        // inline (a 16-character id was one heap allocation per request).
        let random = UInt32.random(in: 0...0x0FFF_FFFF)
        self.requestIDPrefix = RequestID.hex(UInt64(index), digits: 2, after: RequestID.hex(UInt64(random), digits: 7))
        resetUpstreams()
        do {
            let control = try CrossThreadEvent(loop: loop) { [unowned self] in self.handleControl() }
            self.control = control
            cacheWaker = CacheWaker(mailbox: mailbox, control: control)
        } catch {
            throw StartupError(error)
        }
    }

    private func resetUpstreams() {
        for pool in pools { pool.closeAll() }
        pools = settings.upstreams.indices.map { UpstreamPool(upstreamIndex: $0, target: settings.upstreams[$0]) }
        metricSlots = settings.upstreams.map { metrics.upstreamSlot(named: $0.name) }
        upstreamClocks = settings.upstreams.map { clocks.clock(named: $0.name) }
        lastClockSample = settings.upstreams.map { _ in -1 }
        if retryBudget.capacity != settings.retryBudget * RetryBudget.retryCost {
            retryBudget = RetryBudget(retries: settings.retryBudget)
        }
        for (pool, slot) in zip(pools, metricSlots) { pool.reportIdleCount(to: metrics, slot: slot) }
        // Made up front (nil where OpenSSL cannot provide SHA-256: that upstream's requests fail with an S3 error),
        // so a request only reads the array (a lazily filled slot made every access a run-time exclusivity check).
        var made: [Signer?] = []
        var problems: [String?] = []
        for target in settings.upstreams {
            let (signer, problem) = target.makeSigner(fetched: fetchedCredentials[target.name])
            made.append(signer)
            problems.append(problem)
        }
        signers = made  // built in locals: no access to these arrays spans a call
        signerProblems = problems
    }

    /// New credentials for one refreshing upstream: its signer is replaced between requests, so each request
    /// signs with one set of keys or the next, never a mix.
    private func updateCredentials(upstream name: String, _ state: UpstreamCredentialState) {
        fetchedCredentials[name] = state
        var (made, problems) = (signers, signerProblems)
        (signers, signerProblems) = ([], [])
        for (index, target) in settings.upstreams.enumerated() where target.name == name && target.refreshesCredentials
        {
            (made[index], problems[index]) = target.makeSigner(fetched: state)
        }
        (signers, signerProblems) = (made, problems)
    }

    /// Accepts on the given sockets (called before the thread starts).
    func listen(on sockets: [ListenSocket]) throws(StartupError) {
        listeners += try makeListeners(sockets)
        startSlowPeerSweep()
    }

    /// Accepts on `sockets` instead of the current listeners. The new listeners are all made first: when one
    /// cannot be, the worker keeps accepting where it did (bug e) and the new sockets are closed.
    func replaceListeners(with sockets: [ListenSocket]) throws(StartupError) {
        listeners = try makeListeners(sockets)
        pausedListeners = 0
        metrics.limits.acceptResumed()
    }

    /// One listener per socket, or none: on a failure the ones made go (closing their sockets), and so do the
    /// sockets not reached.
    private func makeListeners(_ sockets: [ListenSocket]) throws(StartupError) -> [Listener] {
        var made: [Listener] = []
        for (index, socket) in sockets.enumerated() {
            do {
                let listener = try Listener(
                    loop: loop, socket: socket, initialBackoffMilliseconds: Self.initialAcceptBackoffMilliseconds,
                    onAccept: { [unowned self] fd, peer in self.accept(fd: fd, peer: peer) },
                    onError: { [unowned self] code in self.acceptFailed(code) })
                listener.onResume = { [unowned self] in self.acceptResumed() }
                listener.onOverflow = { [unowned self] fd in self.shed(fd, reason: .descriptorLimit) }
                made.append(listener)
            } catch {
                for unused in sockets[(index + 1)...] { close(unused.fd) }
                throw StartupError(error)
            }
        }
        return made
    }

    var connectionCount: Int { connections.count }

    /// The connections now (a sweep may close some while it runs).
    func connectionsSnapshot() -> [ClientConnection] { Array(connections.values) }

    var isAtCapacity: Bool { connections.count >= settings.limits.maxConnectionsPerWorker }

    private func accept(fd: Int32, peer: SocketAddress) {
        guard settings.admits(peer) else {
            logger.warning("Refused client outside allowed_clients", metadata: ["client.address": peer.host])
            close(fd)
            return
        }
        if isAtCapacity {
            shed(fd, reason: .maxConnections)
            return
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // The stream closes the socket when it cannot be made.
        guard let stream = try? SocketStream(loop: loop, fd: fd, maxRead: ClientConnection.maxRead) else { return }
        let connection = ClientConnection(
            worker: self, stream: stream, peer: peer, principal: Principal(fd: fd, peer: peer), settings: settings)
        connections[ObjectIdentifier(connection)] = connection
        metrics.connectionOpened()
        if isAtCapacity { metrics.limits.setAtCapacity(true) }
    }

    func connectionClosed(_ connection: ClientConnection) {
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        metrics.connectionClosed()
        if !isAtCapacity { metrics.limits.setAtCapacity(false) }
        // A descriptor is free again: a listener paused at the descriptor limit tries at once (issue 20).
        if !isDraining { retryPausedListeners() }
        if isDraining && connections.isEmpty { finishDrain() }
    }

    /// The current configuration's pool for an upstream (only a reload replaces it, between requests).
    func pool(_ upstreamIndex: Int) -> UpstreamPool {
        pools[upstreamIndex]
    }

    /// The worker's signer for an upstream (its day's signing key stays cached in it).
    func signer(for upstreamIndex: Int) -> Signer? {
        signers[upstreamIndex]
    }

    /// The error for a request whose upstream has no signer: 503 naming the credentials problem, or 500.
    func signingUnavailable(_ upstreamIndex: Int) -> ProxyError {
        guard let problem = signerProblems[upstreamIndex] else { return .internalError("signer unavailable") }
        return .serviceUnavailable(
            "no valid credentials for upstream '\(settings.upstreams[upstreamIndex].name)': \(problem)")
    }

    /// Lends the worker's reusable head-encoding buffer, empty, its capacity kept between requests
    /// (one allocation per worker instead of one per head). Re-entrant calls get a fresh buffer.
    func withHeadBuffer<Result, Failure: Error>(_ body: (inout [UInt8]) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        var buffer: [UInt8] = []
        swap(&buffer, &headScratch)
        buffer.removeAll(keepingCapacity: true)
        if buffer.capacity == 0 { buffer.reserveCapacity(2048) }
        defer { swap(&buffer, &headScratch) }
        return try body(&buffer)
    }

    /// The worker's action array for one `ClientConnection.handle`; a connection that handles an event while
    /// another one does gets a new array.
    func takeActionScratch() -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        swap(&actions, &actionScratch)
        return actions
    }

    /// Takes back an emptied action array (the caller gives up its copy, so the buffer stays unique).
    func returnActionScratch(_ actions: consuming [ConnectionAction]) {
        guard actions.capacity > actionScratch.capacity else { return }
        actionScratch = actions
    }

    /// An empty buffer for a signed upstream head, with the capacity an earlier exchange left when there is one.
    /// 992 bytes plus the array's 32-byte header is a 1 KiB block: inside glibc's per-thread cache.
    func takeSignedHeadBuffer() -> [UInt8] {
        var buffer: [UInt8] = []
        if spareSignedHead.capacity > 0 {
            swap(&buffer, &spareSignedHead)
        } else {
            buffer.reserveCapacity(992)
        }
        return buffer
    }

    /// Takes the exchange's signed head (sent, replaced by a new signing, or unsent at the exchange's end) and keeps
    /// its buffer for the next one (one spare, ordinary sizes only), so a request neither allocates nor frees it.
    func recycleSignedHead(of exchange: Exchange) {
        var buffer: [UInt8] = []
        swap(&buffer, &exchange.encodedHead)
        guard spareSignedHead.capacity == 0, buffer.capacity <= 4096 else { return }
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &spareSignedHead)
    }

    /// The signing time (the loop iteration's, plus the upstream's clock offset), formatted once per second rather
    /// than once per request.
    func signingDate(offsetSeconds: Int = 0) -> AmzDate {
        let seconds = nowMicroseconds() / 1_000_000 + offsetSeconds
        if let cached = lastSigningDate, cached.epochSeconds == seconds { return cached }
        let date = AmzDate(epochSeconds: seconds)
        lastSigningDate = date
        return date
    }

    /// The loop iteration's time (`EventLoop.nowMicroseconds`: no clock read per event).
    func nowMicroseconds() -> Int {
        loop.nowMicroseconds
    }

    /// The next request's id, formatted only where it is written (`RequestID`).
    func nextRequest() -> RequestID {
        requestCounter &+= 1
        return RequestID(prefix: requestIDPrefix, counter: requestCounter)
    }

    func nextRequestID() -> String { nextRequest().text }

    // MARK: Cross-thread control (drain, reload)

    /// Thread-safe: stop accepting, finish in-flight requests, then leave the loop.
    func requestDrain() {
        mailbox.post(.drain)
        control?.fire()
    }

    /// Thread-safe: new requests use `settings` from now on; connections in flight keep theirs.
    func requestReload(_ settings: ProxySettings, listenSockets: [ListenSocket]?) {
        mailbox.post(.reload(settings, listenSockets))
        control?.fire()
    }

    /// Thread-safe: sign `upstream`'s requests with these credentials (or answer 503) from now on.
    func requestCredentials(upstream: String, _ state: UpstreamCredentialState) {
        mailbox.post(.credentials(upstream, state))
        control?.fire()
    }

    private func handleControl() {
        for message in mailbox.takeAll() {
            switch message {
            case .drain:
                beginDrain()
            case .credentials(let name, let state):
                updateCredentials(upstream: name, state)
            case .cacheWake(let id):
                connections[id]?.cacheWaitEnded()
            case .reload(let newSettings, let sockets):
                settings = newSettings
                resetUpstreams()
                if let sockets {
                    do {
                        try replaceListeners(with: sockets)
                    } catch {
                        logger.error(
                            "Reload could not accept on the new listen addresses; keeping the previous listeners",
                            metadata: ["worker": String(index), "error": "\(error)"])
                    }
                }
            }
        }
    }

    private func beginDrain() {
        guard !isDraining else { return }
        isDraining = true
        listeners.removeAll()
        for pool in pools { pool.closeAll() }
        // Idle keep-alive connections close now; busy ones close after their response.
        for connection in Array(connections.values) { connection.drain() }
        if connections.isEmpty { finishDrain() }
    }

    private func finishDrain() {
        slowPeerSweep?.cancel()
        for pool in pools { pool.closeAll() }
        loop.exit()
    }

    /// The thread body.
    func run() {
        do {
            try loop.run()
        } catch {
            logger.error("Event loop failed", metadata: ["error": error.description])
        }
        listeners.removeAll()
        for connection in Array(connections.values) { connection.close() }
        for pool in pools { pool.closeAll() }
    }
}
