import CLibevent
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// One event-loop thread: its listeners, client connections, upstream pools and signers
/// (DESIGN §2: nothing on the hot path is shared between threads).
final class Worker {
    let index: Int
    let loop: EventLoop
    /// `loop.base`, for the per-request time reads.
    private let loopBase: OpaquePointer
    let logger: Logger
    let metrics: WorkerMetrics
    private(set) var settings: ProxySettings
    private var listeners: [OpaquePointer] = []
    private var connections: [ObjectIdentifier: ClientConnection] = [:]
    private var pools: [UpstreamPool] = []
    private var signers: [Signer?] = []
    /// Per upstream index: its slot in `metrics` (resolved once per configuration).
    private var metricSlots: [Int] = []
    private(set) var isDraining = false
    private var requestCounter: UInt64 = 0
    private var headScratch: [UInt8] = []
    /// An ended exchange's signed-head buffer, empty, for the next one (`takeSignedHeadBuffer`).
    private var spareSignedHead: [UInt8] = []
    private var lastSigningDate: AmzDate?
    private let requestIDPrefix: String
    private var control: CrossThreadEvent?
    private var pendingSettings: ProxySettings?
    private let mailbox = Mailbox()

    init(index: Int, settings: ProxySettings, logger: Logger, metrics: WorkerMetrics) throws(StartupError) {
        self.index = index
        self.loop = try EventLoop(lockless: true)
        self.loopBase = loop.base
        self.logger = logger
        self.metrics = metrics
        self.settings = settings
        // 7 random hex digits + 2 for the worker + 6 for the counter: 15 characters, which Swift keeps
        // inline (a 16-character id was one heap allocation per request).
        let random = UInt32.random(in: 0...0x0FFF_FFFF)
        self.requestIDPrefix = Self.hex(UInt64(index), digits: 2, after: Self.hex(UInt64(random), digits: 7))
        resetUpstreams()
        control = try CrossThreadEvent(loop: loop) { [unowned self] in self.handleControl() }
    }

    private func resetUpstreams() {
        for pool in pools { pool.closeAll() }
        pools = settings.upstreams.indices.map { UpstreamPool(upstreamIndex: $0, target: settings.upstreams[$0]) }
        metricSlots = settings.upstreams.map { metrics.upstreamSlot(named: $0.name) }
        for (pool, slot) in zip(pools, metricSlots) { pool.reportIdleCount(to: metrics, slot: slot) }
        signers = Array(repeating: nil, count: settings.upstreams.count)
    }

    /// Accepts on the given sockets (called before the thread starts).
    func listen(on sockets: [ListenSocket]) throws(StartupError) {
        listeners += try makeListeners(sockets)
    }

    /// Accepts on `sockets` instead of the current listeners. The new listeners are all made first: when one
    /// cannot be, the worker keeps accepting where it did (bug e) and the new sockets are closed.
    func replaceListeners(with sockets: [ListenSocket]) throws(StartupError) {
        let fresh = try makeListeners(sockets)
        for listener in listeners { evconnlistener_free(listener) }
        listeners = fresh
        if isAtCapacity { for listener in listeners { evconnlistener_disable(listener) } }
    }

    /// One listener per socket, or none: on a failure the ones made are freed and every socket is closed.
    private func makeListeners(_ sockets: [ListenSocket]) throws(StartupError) -> [OpaquePointer] {
        var made: [OpaquePointer] = []
        for (index, socket) in sockets.enumerated() {
            let context = Unmanaged.passUnretained(self).toOpaque()
            guard
                let listener = evconnlistener_new(
                    loop.base,
                    { _, fd, address, length, context in
                        guard let context, let address else { return }
                        Unmanaged<Worker>.fromOpaque(context).takeUnretainedValue().accept(
                            fd: fd, peer: SocketAddress(sockaddr: address, length: length))
                    }, context, LEV_OPT_CLOSE_ON_FREE, -1, socket.fd)
            else {
                for listener in made { evconnlistener_free(listener) }
                for unused in sockets[index...] { close(unused.fd) }
                throw .eventLoop("evconnlistener_new failed for \(socket.boundAddress)")
            }
            made.append(listener)
        }
        return made
    }

    private var isAtCapacity: Bool { connections.count >= settings.limits.maxConnectionsPerWorker }

    private func accept(fd: Int32, peer: SocketAddress) {
        guard settings.admits(peer) else {
            logger.warning("Refused client outside allowed_clients", metadata: ["client.address": peer.host])
            close(fd)
            return
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard let bev = bufferevent_socket_new(loop.base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else {
            close(fd)
            return
        }
        let connection = ClientConnection(worker: self, bev: bev, peer: peer, settings: settings)
        connections[ObjectIdentifier(connection)] = connection
        metrics.connectionOpened()
        if connections.count >= settings.limits.maxConnectionsPerWorker {
            // At capacity: leave further connections in the kernel backlog until one closes.
            for listener in listeners { evconnlistener_disable(listener) }
        }
    }

    func connectionClosed(_ connection: ClientConnection) {
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        metrics.connectionClosed()
        if !isDraining && connections.count < settings.limits.maxConnectionsPerWorker {
            for listener in listeners { evconnlistener_enable(listener) }
        }
        if isDraining && connections.isEmpty { finishDrain() }
    }

    /// The current configuration's pool for an upstream (only a reload replaces it, between requests).
    func pool(_ upstreamIndex: Int) -> UpstreamPool {
        pools[upstreamIndex]
    }

    /// The worker's signer for an upstream (its day's signing key stays cached in it).
    func signer(for upstreamIndex: Int) -> Signer? {
        if let signer = signers[upstreamIndex] { return signer }
        let target = settings.upstreams[upstreamIndex]
        guard let signer = try? Signer(credentials: target.credentials, region: target.region, service: "s3") else {
            return nil
        }
        signers[upstreamIndex] = signer
        return signer
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

    /// Keeps an ended exchange's signed head buffer for the next one (one spare, ordinary sizes only), so a
    /// keep-alive request neither allocates nor frees it.
    func recycleSignedHeadBuffer(_ buffer: inout [UInt8]) {
        guard spareSignedHead.capacity == 0, buffer.capacity <= 4096 else { return }
        buffer.removeAll(keepingCapacity: true)
        swap(&buffer, &spareSignedHead)
    }

    /// The signing time (the loop iteration's), formatted once per second rather than once per request.
    func signingDate() -> AmzDate {
        let seconds = nowMicroseconds() / 1_000_000
        if let cached = lastSigningDate, cached.epochSeconds == seconds { return cached }
        let date = AmzDate(epochSeconds: seconds)
        lastSigningDate = date
        return date
    }

    /// The loop iteration's time (`EventLoop.cachedMicroseconds`), read without touching `loop`'s reference count.
    func nowMicroseconds() -> Int {
        EventLoop.cachedMicroseconds(loopBase)
    }

    /// The next request's id, formatted only where it is written (`RequestID`).
    func nextRequest() -> RequestID {
        requestCounter &+= 1
        return RequestID(prefix: requestIDPrefix, counter: requestCounter)
    }

    func nextRequestID() -> String { nextRequest().text }

    /// `prefix` + the counter in upper-case hex, at least 6 digits.
    static func requestID(prefix: String, counter: UInt64) -> String {
        hex(counter, digits: 6, after: prefix)
    }

    func exchangeStarted(_ exchange: Exchange, client: String) {
        exchange.ops.client = client
        metrics.requestStarted()
    }

    /// Every exchange ends here exactly once: counted, and logged (`completed` false: cut short).
    func exchangeEnded(_ exchange: Exchange, completed: Bool) {
        recycleSignedHeadBuffer(&exchange.encodedHead)
        let ops = exchange.ops
        let duration = max(0, nowMicroseconds() - ops.startedAtMicros)
        metrics.requestEnded(
            bucket: exchange.bucket, method: exchange.method, status: exchange.responseStatus,
            bytesIn: exchange.requestBodyBytes, bytesOut: exchange.responseBodyBytes, durationMicros: duration,
            upstreamSlot: ops.upstreamSlot, upstreamLatencyMicros: ops.upstreamLatencyMicros,
            reusedConnections: ops.reusedConnections)
        logAccess(
            AccessLogEntry(
                requestID: exchange.requestID, client: ops.client, bucket: exchange.bucket, method: exchange.method,
                path: exchange.logPath, status: exchange.responseStatus, bytesIn: exchange.requestBodyBytes,
                bytesOut: exchange.responseBodyBytes, durationMicros: duration, upstreamStatus: ops.upstreamStatus,
                upstreamMicros: ops.upstreamLatencyMicros, upstreamReused: ops.upstreamReused,
                errorCode: ops.errorCode ?? (completed ? nil : "aborted")))
    }

    /// A response presignd wrote itself with no exchange behind it (routing, policy, malformed requests).
    func localResponseSent(
        method: String, path: String, status: Int, bytesOut: Int, client: SocketAddress, requestID: String,
        errorCode: String?
    ) {
        metrics.requestEnded(
            bucket: "-", method: method, status: status, bytesIn: 0, bytesOut: bytesOut, durationMicros: 0,
            wasInFlight: false)
        logAccess(
            AccessLogEntry(
                requestID: requestID, client: client.host, bucket: nil, method: method, path: path, status: status,
                bytesIn: 0, bytesOut: bytesOut, durationMicros: 0, errorCode: errorCode))
    }

    /// An exchange's signed head went to `connection` (pooled or new): timings, reuse and TLS counters.
    /// `settings` are the ones the exchange runs under: after a reload they may be the old ones,
    /// whose upstream indexes the slots resolved for the current configuration do not follow.
    func upstreamAttached(
        _ connection: UpstreamConnection, to exchange: Exchange, settings exchangeSettings: ProxySettings
    ) {
        let index = exchange.upstreamIndex
        let slot =
            exchangeSettings === settings
            ? metricSlots[index] : metrics.upstreamSlot(named: exchangeSettings.upstreams[index].name)
        exchange.ops.upstreamAttached(slot: slot, reused: connection.isReused, at: nowMicroseconds())
        if !connection.isReused { metrics.upstreamConnectionOpened(slot: slot) }
        if !connection.isReused && connection.onTLSHandshake == nil {
            connection.onTLSHandshake = { [metrics] resumed in metrics.tlsHandshake(slot: slot, resumed: resumed) }
        }
    }

    /// One access-log line per request: never the query string (it may carry presign signatures).
    /// The entry is built only when the access log is on (`@autoclosure`): nothing per request otherwise.
    func logAccess(_ entry: @autoclosure () -> AccessLogEntry) {
        guard settings.accessLog else { return }
        logger.log(.info, "Request", pairs: entry().metadata)
    }

    /// `prefix` + `value` in upper-case hex with at least `digits` digits, written in place (one allocation).
    private static func hex(_ value: UInt64, digits minimum: Int, after prefix: String = "") -> String {
        let prefix = prefix.utf8
        return String(unsafeUninitializedCapacity: prefix.count + hexDigitCount(value, minimum: minimum)) { buffer in
            var index = 0
            for byte in prefix {
                buffer[index] = byte
                index += 1
            }
            forEachHexDigit(value, minimum: minimum) { digit in
                buffer[index] = digit
                index += 1
            }
            return index
        }
    }

    /// How many digits `forEachHexDigit` gives.
    static func hexDigitCount(_ value: UInt64, minimum: Int) -> Int {
        max(minimum, (UInt64.bitWidth - value.leadingZeroBitCount + 3) / 4)
    }

    /// Hands `value`'s upper-case hex digits to `body`, most significant first, zero-padded to `minimum`.
    @inline(__always)
    static func forEachHexDigit(_ value: UInt64, minimum: Int, _ body: (UInt8) -> Void) {
        var shift = (hexDigitCount(value, minimum: minimum) - 1) * 4
        while shift >= 0 {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0xF
            body(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10)
            shift -= 4
        }
    }

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

    private func handleControl() {
        for message in mailbox.takeAll() {
            switch message {
            case .drain:
                beginDrain()
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
        for listener in listeners { evconnlistener_free(listener) }
        listeners.removeAll()
        for pool in pools { pool.closeAll() }
        // Idle keep-alive connections close now; busy ones close after their response.
        for connection in Array(connections.values) { connection.drain() }
        if connections.isEmpty { finishDrain() }
    }

    private func finishDrain() {
        for pool in pools { pool.closeAll() }
        loop.exit()
    }

    /// The thread body.
    func run() {
        loop.run()
        for listener in listeners { evconnlistener_free(listener) }
        listeners.removeAll()
        for connection in Array(connections.values) { connection.close() }
        for pool in pools { pool.closeAll() }
    }
}
