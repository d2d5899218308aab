import CLibevent
import PresigndHTTP1
import PresigndSigV4

/// The request side: decode client bytes, route, check policy, sign, forward the body.
extension ClientConnection {
    /// Pipelined bytes buffered while a response runs before reading pauses.
    static let maxPipelinedBytes = 64 * 1024

    /// Drives the request decoder over whatever the client has sent, as far as the state allows.
    func processClientInput() {
        // Re-entrant calls (a local answer ending a cycle) leave the work to the running loop.
        guard !isProcessingInput else { return }
        isProcessingInput = true
        defer { isProcessingInput = false }
        while !isClosed && !isFlushingToClose {
            switch requestPhase {
            case .done:
                // One exchange at a time: pipelined bytes wait in the input buffer. Reading stays
                // on (no epoll_ctl per request) until a pipelining client has sent too much.
                if EvBuffer.length(input) > Self.maxPipelinedBytes { pauseClientReading() }
                return
            case .head:
                guard exchange == nil else {
                    pauseClientReading()
                    return
                }
                if EvBuffer.length(input) == 0 { return }
                let now = borrowedWorker.with { $0.nowMicroseconds() } / 1000
                if headStartedAt == nil {
                    // The header timeout is armed only if the head does not arrive whole (`.needMore`).
                    headStartedAt = now
                } else if let started = headStartedAt, now - started > settings.limits.headerTimeoutMilliseconds {
                    respondLocally(error: .requestTimeout, method: "GET", resource: "", closing: true)
                    return
                }
            case .body:
                let highWatermark = watermarks.high
                let upstreamFull = borrowedExchange?.with { exchange in
                    exchange.borrowedUpstream?.with { EvBuffer.length($0.output) > highWatermark }
                }
                if upstreamFull == true {
                    clientReadPaused = true
                    pauseClientReading()
                    return
                }
            // No early return on an empty buffer: a finished body still owes its `.end`.
            }
            let output: DecoderOutput
            do {
                output = try EvBuffer.withFirstSegment(input) { segment, available throws(HTTPParseError) in
                    try decoder.next(segment, available: available)
                }
            } catch {
                rejectMalformed(error)
                return
            }
            switch output {
            case .needMore(let consumed):
                EvBuffer.drain(input, consumed)
                if requestPhase == .head && !isHeadTimeoutSet {
                    isHeadTimeoutSet = true
                    setReadTimeout(settings.limits.headerTimeoutMilliseconds)
                }
                if consumed == 0 { return }
            case .head(let head, let consumed):
                EvBuffer.drain(input, consumed)
                headStartedAt = nil
                isHeadTimeoutSet = false
                startExchange(head)
            case .body(let skip, let count):
                EvBuffer.drain(input, skip)
                forwardRequestBody(count: count)
                if skip == 0 && count == 0 { return }
            case .end(let consumed):
                EvBuffer.drain(input, consumed)
                finishRequestBody()
            }
        }
    }

    private func forwardRequestBody(count: Int) {
        guard count > 0 else { return }
        if let exchange, exchange.pendingPlan != nil {
            spoolRequestBody(exchange, count: count)
            return
        }
        guard let exchange, let upstream = exchange.upstream else {
            // The exchange already failed: the body is read and dropped so the connection stays in sync.
            EvBuffer.drain(input, count)
            return
        }
        // Only bodies with a known length stream; length-less ones are spooled (BodyPlan).
        exchange.requestBodyBytes += count
        EvBuffer.move(from: input, to: upstream.output, count: count)
    }

    private func finishRequestBody() {
        requestPhase = .done
        // While the response runs the client owes nothing: no read timeout (a long download is
        // not an idle client); the idle timeout comes back with the next request cycle.
        setReadTimeout(0)
        if let exchange, exchange.pendingPlan != nil {
            sendSpooledUpload(exchange)
            return
        }
        if exchange == nil {
            // The response was already sent (an early local error): carry on with the next request.
            requestCycleEnded()
        }
    }

    /// A head arrived: answer locally or start forwarding.
    private func startExchange(_ head: RequestHead) {
        // The decoder still owes this message's `.end` (at once when there is no body), so the
        // body phase runs even for bodyless requests.
        requestPhase = .body
        // A reload that happened while this connection sat idle applies to its next request.
        if settings !== worker.settings { settings = worker.settings }
        let hasBody = decoder.framing != .none
        let isHTTP10 = head.version.minor == 0
        let keepAlive = decoder.isKeepAlive && !worker.isDraining
        if !keepAlive { closeAfterResponse = true }
        let decision: RewriteDecision
        do {
            decision = try RequestRewriter.rewrite(head: head, framing: decoder.framing, settings: settings)
        } catch {
            respondLocally(
                error: error, method: head.method, resource: RequestRewriter.resource(of: head.target),
                closing: hasBody, isHTTP10: isHTTP10)
            return
        }
        switch consume decision {
        case .serviceRoot:
            respondServiceRoot(method: head.method, isHTTP10: isHTTP10)
        case .forward(let plan):
            forward(plan, head: head, isHTTP10: isHTTP10, keepAlive: keepAlive, hasBody: hasBody)
        case .redirect(let plan):
            respondRedirect(plan, hasBody: hasBody, isHTTP10: isHTTP10)
        }
    }

    /// Makes the connection's exchange for a forwarded request.
    private func beginExchange(
        method: String, logPath: String, bucket: String, upstreamIndex: Int, hasBody: Bool, keepAlive: Bool,
        isHTTP10: Bool
    ) -> Exchange {
        borrowedWorker.with { worker in
            let exchange = Exchange(
                id: worker.nextRequest(), method: method, logPath: logPath, bucket: bucket,
                upstreamIndex: upstreamIndex, startedAtMicros: worker.nowMicroseconds(), encodedHead: [],
                requestHasBody: hasBody, clientKeepAlive: keepAlive, clientIsHTTP10: isHTTP10)
            self.exchange = exchange
            responsePhase = .head
            worker.exchangeStarted(exchange, client: peerHost)
            return exchange
        }
    }

    private func forward(_ plan: ForwardPlan, head: RequestHead, isHTTP10: Bool, keepAlive: Bool, hasBody: Bool) {
        let exchange = beginExchange(
            method: head.method, logPath: plan.logPath, bucket: plan.bucket, upstreamIndex: plan.upstreamIndex,
            hasBody: hasBody, keepAlive: keepAlive, isHTTP10: isHTTP10)
        if case .spool(_, let decodedLength) = plan.body {
            let limit = min(settings.maxSpoolSize, plan.maxUploadSize ?? Int.max)
            // A declared length over the limit is refused before `100 Continue` invites the body.
            if let decodedLength, decodedLength > limit {
                failBeforeResponse(.entityTooLarge)
                return
            }
            if let error = startSpooledExchange(exchange, plan: plan, limit: limit) {
                failBeforeResponse(error)
                return
            }
        } else {
            let date = borrowedWorker.with { $0.signingDate() }
            guard let encoded = signedHead(plan, date: date) else { return }
            exchange.encodedHead = encoded
        }
        if decoder.expectsContinue && hasBody {
            // R2 never sends 100 Continue: presignd answers it (DESIGN §2).
            EvBuffer.add(output, "HTTP/1.1 100 Continue\r\n\r\n")
        }
        if exchange.pendingPlan == nil { attachUpstream(fresh: false) }
    }

    /// Signs the plan now (signing is the last change to a request) and encodes the head.
    /// On failure the exchange is answered with an error and nil returned.
    func signedHead(_ plan: ForwardPlan, date: AmzDate) -> [UInt8]? {
        let signed: Result<[UInt8], ProxyError> = borrowedWorker.with { worker in
            guard let signer = worker.signer(for: plan.upstreamIndex) else {
                return .failure(.internalError("signer unavailable"))
            }
            var encoded = worker.takeSignedHeadBuffer()
            do {
                try signer.signHead(plan.request, payload: plan.payload, date: date, into: &encoded)
            } catch {
                worker.metrics.signingFailed()
                return .failure(.internalError("signing failed"))
            }
            return .success(encoded)
        }
        switch signed {
        case .success(let encoded):
            return encoded
        case .failure(let error):
            failBeforeResponse(error)
            return nil
        }
    }

    /// Connects (or takes a pooled connection) and sends the signed head.
    func attachUpstream(fresh: Bool) {
        guard let exchange else { return }
        borrowedWorker.with { worker in attachUpstream(exchange, fresh: fresh, worker: worker) }
    }

    private func attachUpstream(_ exchange: Exchange, fresh: Bool, worker: Worker) {
        // One strong copy for the whole method, not a retain/release around every use.
        let settings = self.settings
        let index = exchange.upstreamIndex
        // After a reload the worker's pools belong to the new configuration: an exchange still
        // running under the old one connects on its own.
        let pooled = settings === worker.settings
        var connection = fresh || !pooled ? nil : worker.withPool(index) { $0.take() }
        if connection == nil {
            do {
                connection = try UpstreamConnection(
                    loop: worker.loop, target: settings.upstreams[index], upstreamIndex: index,
                    sessions: pooled ? worker.withPool(index) { $0.sessions } : TLSSessionStore(),
                    lowWatermark: settings.lowWatermark)
                if pooled { worker.withPool(index) { $0.noteCreated() } }
            } catch {
                failBeforeResponse(error)
                return
            }
        }
        guard let connection else { return }
        connection.setTimeouts(
            readMilliseconds: settings.upstreams[index].firstByteTimeoutMilliseconds,
            writeMilliseconds: connection.isConnected
                ? settings.limits.bodyIdleTimeoutMilliseconds : settings.upstreams[index].connectTimeoutMilliseconds)
        connection.delegate = self
        connection.enableReading()
        exchange.upstream = connection
        EvBuffer.add(connection.output, exchange.encodedHead)
        worker.upstreamAttached(connection, to: exchange, settings: settings)
        if let failure = connection.earlyFailure {
            upstreamEnded(connection, failure)
            return
        }
        if exchange.spool != nil {
            pumpSpool()
        } else if requestPhase == .body {
            resumeClientReading()
        }
    }

    private func rejectMalformed(_ error: HTTPParseError) {
        let proxyError: ProxyError
        switch error.status {
        case 414: proxyError = .requestLineTooLong
        case 431: proxyError = .headersTooLarge
        case 501: proxyError = .notImplemented("\(error)")
        case 505: proxyError = .versionNotSupported
        default: proxyError = .badRequest("\(error)")
        }
        if exchange != nil && responsePhase == .body {
            close()  // mid-response: nothing can be answered any more
            return
        }
        exchange?.upstream?.free()
        let ended = exchange
        exchange = nil
        respondLocally(
            error: proxyError, method: ended?.method ?? "GET", resource: ended?.logPath ?? "", closing: true,
            exchange: ended)
    }
}
