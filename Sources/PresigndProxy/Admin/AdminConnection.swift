import PresigndConfig
import PresigndHTTP1
import PresigndIO

/// One admin request/response. The request's head and body must arrive within `admin_request_timeout` of the
/// accept, however they trickle in (a deadline, not a timeout restarted by each byte), and the body within
/// `max_admin_body_size` (issue 20).
final class AdminConnection: StreamDelegate {
    let stream: SocketStream
    unowned let server: AdminServer
    var decoder = RequestDecoder()
    var answered = false
    let isLoopbackPeer: Bool
    /// Who is asking: the presign API judges links by the same principal model as the proxy (issue 19 §6).
    let principal: Principal
    /// A presign API request whose body is being read (bounded by `maxBodyBytes`).
    var pendingHead: RequestHead?
    var body: [UInt8] = []

    /// Admin requests are small: reads of 4-64 KiB.
    static let maxRead = 64 * 1024

    let maxBodyBytes: Int
    /// Ends a request that is not complete by the deadline.
    private var deadline: LoopTimer?
    private var isFinished = false

    init(
        stream: SocketStream, server: AdminServer, isLoopbackPeer: Bool, loop: EventLoop, limits: ClientLimits,
        principal: Principal
    ) {
        self.principal = principal
        self.stream = stream
        self.server = server
        self.isLoopbackPeer = isLoopbackPeer
        self.maxBodyBytes = limits.maxAdminBodyBytes
        stream.delegate = self
        let timeout = limits.adminRequestTimeoutMilliseconds
        stream.setTimeouts(readMilliseconds: timeout, writeMilliseconds: timeout)
        stream.lowWatermark = 0
        deadline = try? LoopTimer(loop: loop) { [unowned self] in self.deadlinePassed() }
        do {
            try deadline?.schedule(milliseconds: timeout)
        } catch {
            // Without the deadline the read timeout still bounds each pause.
            deadline = nil
        }
        stream.enableReading()
    }

    /// The request did not arrive whole in time: 408, then the connection closes.
    private func deadlinePassed() {
        guard !answered, !isFinished else { return }
        write(LocalResponse(status: 408, text: "request timeout"), answering: pendingHead?.method ?? "GET")
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
                if server.isAPIPath(head) {
                    if case .contentLength(let length) = decoder.framing, length > maxBodyBytes {
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
                guard pendingHead != nil, body.count + count <= maxBodyBytes else {
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
                    server.respondAPI(
                        head: head, body: body, isLoopbackPeer: isLoopbackPeer, principal: principal),
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
        guard !isFinished else { return }
        isFinished = true
        deadline?.cancel()
        deadline = nil
        stream.close()
        server.finished(self)
    }
}
