import CLibevent
import PresigndHTTP1

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
    private var listener: OpaquePointer?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]

    init(loop: EventLoop, socket: ListenSocket, daemon: Daemon, logger: Logger) throws(StartupError) {
        self.loop = loop
        self.daemon = daemon
        self.logger = logger
        let context = Unmanaged.passUnretained(self).toOpaque()
        listener = evconnlistener_new(
            loop.base,
            { _, fd, address, length, context in
                guard let context else { return }
                let peer = address.map { SocketAddress(sockaddr: $0, length: length) }
                Unmanaged<AdminServer>.fromOpaque(context).takeUnretainedValue().accept(fd, peer: peer)
            }, context, LEV_OPT_CLOSE_ON_FREE, -1, socket.fd)
        guard listener != nil else { throw .eventLoop("evconnlistener_new failed for the admin listener") }
    }

    private func accept(_ fd: Int32, peer: SocketAddress?) {
        guard let bev = bufferevent_socket_new(loop.base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else {
            Glibc.close(fd)
            return
        }
        let connection = AdminConnection(bev: bev, server: self, isLoopbackPeer: peer?.isLoopback ?? true)
        connections[ObjectIdentifier(connection)] = connection
    }

    fileprivate func finished(_ connection: AdminConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
    }

    deinit {
        if let listener { evconnlistener_free(listener) }
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
            let ready = daemon.health.snapshot().isReady && !daemon.isDraining
            return ready ? LocalResponse(status: 200, text: "ready") : LocalResponse(status: 503, text: "not ready")
        case "/metrics":
            let workers = daemon.metricSnapshots()
            let text =
                MetricsText.render(workers: workers, health: daemon.health.snapshot())
                + MetricsText.renderPresign(links: presign.linksIssued, workers: workers)
            return LocalResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Array(text.utf8))
        default:
            return LocalResponse(status: 404, text: "not found")
        }
    }
}

/// One admin request/response.
private final class AdminConnection {
    let bev: OpaquePointer
    unowned let server: AdminServer
    var decoder = RequestDecoder()
    var answered = false
    let isLoopbackPeer: Bool
    /// A presign API request whose body is being read (bounded by `AdminServer.maxBodyBytes`).
    var pendingHead: RequestHead?
    var body: [UInt8] = []

    init(bev: OpaquePointer, server: AdminServer, isLoopbackPeer: Bool) {
        self.bev = bev
        self.server = server
        self.isLoopbackPeer = isLoopbackPeer
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(
            bev,
            { _, context in
                guard let context else { return }
                Unmanaged<AdminConnection>.fromOpaque(context).takeUnretainedValue().readable()
            },
            { _, context in
                guard let context else { return }
                Unmanaged<AdminConnection>.fromOpaque(context).takeUnretainedValue().drained()
            },
            { _, _, context in
                guard let context else { return }
                Unmanaged<AdminConnection>.fromOpaque(context).takeUnretainedValue().finish()
            }, context)
        var timeout = timeValue(milliseconds: 10_000)
        bufferevent_set_timeouts(bev, &timeout, &timeout)
        bufferevent_setwatermark(bev, Int16(EV_WRITE), 0, 0)
        bufferevent_enable(bev, Int16(EV_READ | EV_WRITE))
    }

    func readable() {
        guard !answered else { return }
        let input = bufferevent_get_input(bev)!
        // With a body pending, an empty buffer still owes the decoder's `.end`.
        while !answered && (EvBuffer.length(input) > 0 || pendingHead != nil) {
            let output: DecoderOutput
            do {
                output = try EvBuffer.withFirstSegment(input) { segment, available throws(HTTPParseError) in
                    try decoder.next(segment, available: available)
                }
            } catch {
                write(LocalResponse(status: error.status, text: "bad request"), answering: "")
                return
            }
            switch output {
            case .needMore(let consumed):
                EvBuffer.drain(input, consumed)
                if consumed == 0 { return }
            case .head(let head, let consumed):
                EvBuffer.drain(input, consumed)
                if server.isPresignPath(head) {
                    if case .contentLength(let length) = decoder.framing, length > AdminServer.maxBodyBytes {
                        write(server.tooLarge(head), answering: head.method)
                        return
                    }
                    pendingHead = head  // the body follows; answered at `.end`
                    if decoder.expectsContinue {
                        EvBuffer.add(bufferevent_get_output(bev)!, LocalResponse.interimContinue)
                    }
                    continue
                }
                write(server.respond(to: head), answering: head.method)
                return
            case .body(let skip, let count):
                EvBuffer.drain(input, skip)
                guard pendingHead != nil, body.count + count <= AdminServer.maxBodyBytes else {
                    if let head = pendingHead { write(server.tooLarge(head), answering: head.method) }
                    return
                }
                body += EvBuffer.copyPrefix(input, count)
                EvBuffer.drain(input, count)
                if skip == 0 && count == 0 { return }
            case .end(let consumed):
                EvBuffer.drain(input, consumed)
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
        bufferevent_disable(bev, Int16(EV_READ))
        var response = response
        response.closesConnection = true
        EvBuffer.add(bufferevent_get_output(bev)!, response.encoded(answering: method))
    }

    func drained() {
        if answered && EvBuffer.length(bufferevent_get_output(bev)!) == 0 { finish() }
    }

    func finish() {
        bufferevent_free(bev)
        server.finished(self)
    }
}
