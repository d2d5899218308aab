import PresigndConfig
import PresigndHTTP1
import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// The admin listener on the main thread: `/healthz`, `/readyz`, `/metrics`, and the presign API
/// `POST /v1/presign` (AdminServer+Presign.swift). One request per connection (answers carry
/// `Connection: close`); tiny, so it never competes with the workers.
final class AdminServer {
    private let loop: EventLoop
    unowned let daemon: Daemon
    let logger: Logger
    /// The presign API's signers and counters (main thread only).
    var presign = PresignAdminState()
    private var listener: Listener?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]
    /// Connections closed at once because `max_admin_connections` were open (issue 20).
    private(set) var refusedConnections = 0
    private var acceptErrorLog = LogRateLimiter()

    init(loop: EventLoop, socket: ListenSocket, daemon: Daemon, logger: Logger) throws(StartupError) {
        self.loop = loop
        self.daemon = daemon
        self.logger = logger
        do {
            listener = try Listener(
                loop: loop, socket: socket, onAccept: { [unowned self] fd, peer in self.accept(fd, peer: peer) },
                onError: { [unowned self] code in self.acceptFailed(code) })
            listener?.onOverflow = { [unowned self] fd in self.refuse(fd) }
        } catch {
            throw StartupError(error)
        }
    }

    /// A failed accept: the listener pauses and retries by itself; logged at most once a second (issue 20).
    private func acceptFailed(_ code: Int32) {
        guard let count = acceptErrorLog.record(now: loop.nowMicroseconds / 1000) else { return }
        logger.warning(
            "Admin listener cannot accept; pausing",
            metadata: ["error": String(cString: strerror(code)), "failures": String(count)])
    }

    /// The admin limits of the running configuration (`[server.limits]`).
    var limits: ClientLimits { daemon.settings.limits }

    /// Answers 503 and closes: over `max_admin_connections`, or at the descriptor limit.
    private func refuse(_ fd: Int32) {
        refusedConnections += 1
        var answer = LocalResponse(status: 503, text: "too many admin connections", headers: [("Retry-After", "1")])
        answer.closesConnection = true
        ImmediateAnswer.send(answer.encoded(answering: "GET"), andClose: fd)
    }

    private func accept(_ fd: Int32, peer: SocketAddress?) {
        // Its own cap: a flood of admin connections cannot take the descriptors the proxy needs (issue 20).
        guard connections.count < limits.maxAdminConnections else { return refuse(fd) }
        // The stream closes the socket if it cannot be made.
        guard let stream = try? SocketStream(loop: loop, fd: fd, maxRead: AdminConnection.maxRead) else { return }
        let connection = AdminConnection(
            stream: stream, server: self, isLoopbackPeer: peer?.isLoopback ?? true, loop: loop, limits: limits,
            principal: Principal(fd: fd, peer: peer))
        connections[ObjectIdentifier(connection)] = connection
    }

    func finished(_ connection: AdminConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
    }

    /// What `/metrics` shows of the limits (issue 20).
    var limitFigures: MetricsText.LimitFigures {
        MetricsText.LimitFigures(
            workers: daemon.limitCounters, spoolInUse: daemon.spoolBudget.inUse,
            spoolBudget: daemon.spoolBudget.limit, adminOpen: connections.count, adminRefused: refusedConnections)
    }

    /// The answer to an admin request other than the presign API's.
    func respond(to head: RequestHead) -> LocalResponse {
        let path = head.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.target
        guard head.method == "GET" || head.method == "HEAD" else {
            return LocalResponse(status: 405, text: "method not allowed", headers: [("Allow", "GET, HEAD")])
        }
        switch path {
        case "/healthz":
            return LocalResponse(status: 200, text: "ok")
        case "/readyz":
            // Not ready while a worker cannot take connections: accepting paused, or max_connections reached.
            let saturated = daemon.limitCounters.contains { $0.isAcceptPaused || $0.isAtCapacity }
            let health = daemon.health.snapshot()
            guard health.isReady && !daemon.isDraining && !saturated else {
                return LocalResponse(status: 503, text: "not ready")
            }
            if let (name, problem) = health.credentialProblems.min(by: { $0.key < $1.key }) {
                return LocalResponse(
                    status: 503, text: "not ready: no valid credentials for upstream '\(name)': \(problem)")
            }
            return LocalResponse(status: 200, text: "ready")
        case "/metrics":
            let workers = daemon.metricSnapshots()
            let text =
                MetricsText.render(workers: workers, health: daemon.health.snapshot())
                + MetricsText.renderPresign(links: presign.linksIssued, workers: workers)
                + MetricsText.renderLimits(limitFigures)
                + MetricsText.renderCredentials(daemon.credentialMetrics)
                + MetricsText.renderRetries(workers: workers, clocks: daemon.clocks.all)
                + MetricsText.renderCache(daemon.cacheFigures)
            return LocalResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Array(text.utf8))
        default:
            return LocalResponse(status: 404, text: "not found")
        }
    }
}
