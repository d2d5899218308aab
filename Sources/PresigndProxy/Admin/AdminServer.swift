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

    init(loop: EventLoop, socket: ListenSocket, daemon: Daemon, logger: Logger) throws(StartupError) {
        self.loop = loop
        self.daemon = daemon
        self.logger = logger
        do {
            listener = try Listener(
                loop: loop, socket: socket, onAccept: { [unowned self] fd, peer in self.accept(fd, peer: peer) },
                onError: { [unowned self] code in self.acceptFailed(code) })
        } catch {
            throw StartupError(error)
        }
    }

    /// The first failed accept of an episode (the listener pauses and retries by itself, issue 20).
    private func acceptFailed(_ code: Int32) {
        logger.warning(
            "Admin listener cannot accept; pausing", metadata: ["error": String(cString: strerror(code))])
    }

    private func accept(_ fd: Int32, peer: SocketAddress?) {
        // The stream closes the socket if it cannot be made.
        guard let stream = try? SocketStream(loop: loop, fd: fd, maxRead: AdminConnection.maxRead) else { return }
        let connection = AdminConnection(stream: stream, server: self, isLoopbackPeer: peer?.isLoopback ?? true)
        connections[ObjectIdentifier(connection)] = connection
    }

    fileprivate func finished(_ connection: AdminConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
    }

    /// The answer to an admin request other than the presign API's.
    fileprivate func respond(to head: RequestHead) -> LocalResponse {
        let path = head.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.target
        guard head.method == "GET" || head.method == "HEAD" else {
            return LocalResponse(status: 405, text: "method not allowed", headers: [("Allow", "GET, HEAD")])
        }
        switch path {
        case "/healthz":
            return LocalResponse(status: 200, text: "ok")
        case "/readyz":
            let health = daemon.health.snapshot()
            guard health.isReady && !daemon.isDraining else { return LocalResponse(status: 503, text: "not ready") }
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
                + MetricsText.renderCredentials(daemon.credentialMetrics)
            return LocalResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Array(text.utf8))
        default:
            return LocalResponse(status: 404, text: "not found")
        }
    }
}

/// One admin request/response.
private final class AdminConnection: StreamDelegate {
    let stream: SocketStream
    unowned let server: AdminServer
    var decoder = RequestDecoder()
    var answered = false
    let isLoopbackPeer: Bool
    /// A presign API request whose body is being read (bounded by `AdminServer.maxBodyBytes`).
    var pendingHead: RequestHead?
    var body: [UInt8] = []

    /// Admin requests are small: reads of 4-64 KiB.
    static let maxRead = 64 * 1024

    init(stream: SocketStream, server: AdminServer, isLoopbackPeer: Bool) {
        self.stream = stream
        self.server = server
        self.isLoopbackPeer = isLoopbackPeer
        stream.delegate = self
        stream.setTimeouts(readMilliseconds: 10_000, writeMilliseconds: 10_000)
        stream.lowWatermark = 0
        stream.enableReading()
    }

    func streamReadable() { readable() }
    func streamDrained() { drained() }
    func streamEnded(_ end: StreamEnd) { finish() }

    /// Appends to the output and writes it; the connection ends once an answer has gone out whole.
    private func send(_ bytes: [UInt8]) {
        do {
            try stream.output.append(bytes)
        } catch {
            finish()
            return
        }
        stream.flush()
        drained()
    }

    func readable() {
        guard !answered else { return }
        let input = stream.input
        // With a body pending, an empty buffer still owes the decoder's `.end`.
        while !answered && (input.count > 0 || pendingHead != nil) {
            let output: DecoderOutput
            do {
                output = try input.withFirstSegment { segment, available throws(HTTPParseError) in
                    try decoder.next(segment, available: available)
                }
            } catch {
                write(LocalResponse(status: error.status, text: "bad request"), answering: "")
                return
            }
            switch output {
            case .needMore(let consumed):
                input.drain(consumed)
                if consumed == 0 { return }
            case .head(let head, let consumed):
                input.drain(consumed)
                if server.isPresignPath(head) {
                    if case .contentLength(let length) = decoder.framing, length > AdminServer.maxBodyBytes {
                        write(server.tooLarge(head), answering: head.method)
                        return
                    }
                    pendingHead = head  // the body follows; answered at `.end`
                    if decoder.expectsContinue {
                        send(LocalResponse.interimContinue)
                    }
                    continue
                }
                write(server.respond(to: head), answering: head.method)
                return
            case .body(let skip, let count):
                input.drain(skip)
                guard pendingHead != nil, body.count + count <= AdminServer.maxBodyBytes else {
                    if let head = pendingHead { write(server.tooLarge(head), answering: head.method) }
                    return
                }
                body += input.copyOut(count)
                input.drain(count)
                if skip == 0 && count == 0 { return }
            case .end(let consumed):
                input.drain(consumed)
                guard let head = pendingHead else { return }
                write(
                    server.respondPresign(head: head, body: body, isLoopbackPeer: isLoopbackPeer),
                    answering: head.method)
                return
            }
        }
    }

    /// Sends the one answer this connection gets; it closes once the answer is flushed (`drained`).
    private func write(_ response: LocalResponse, answering method: String) {
        answered = true
        stream.disableReading()
        var response = response
        response.closesConnection = true
        send(response.encoded(answering: method))
    }

    func drained() {
        if answered && stream.output.count == 0 { finish() }
    }

    func finish() {
        stream.close()
        server.finished(self)
    }
}
