import PresigndHTTP1
import PresigndIO
import PresigndPolicy
import PresigndSigV4

/// The request side: decode client bytes, route, check policy, sign, forward the body.
extension ClientConnection {
    /// Drives the request decoder over whatever the client has sent, as far as the state allows.
    func processClientInput() {
        // Re-entrant calls (an action asking for the next request) leave the work to the running loop.
        guard !isDecodingInput else { return }
        isDecodingInput = true
        defer { isDecodingInput = false }
        while machine.decodesClientInput {
            let inHead: Bool
            switch machine.state {
            case .idle:
                if input.count == 0 { return }
                if output.count > settings.highWatermark {
                    decodingWaitsForOutput = true  // `settle` decodes on once the output drains
                    return
                }
                // A reload reaches the connection between requests, decoder limits included (bug d).
                applyCurrentSettings()
                inHead = true
            case .readingHead:
                inHead = true
            default:
                inHead = false
                // Backpressure: body bytes wait in the input until the upstream's output drains; `settle`
                // resumes reading and this loop together.
                if let upstream = exchange?.upstream, exchange?.spool == nil,
                    upstream.output.count > settings.highWatermark
                {
                    stream.disableReading()
                    return
                }
            // No early return on an empty buffer: a finished body still owes its `.end`.
            }
            let output: DecoderOutput
            do {
                output = try input.withFirstSegment { segment, available throws(HTTPParseError) in
                    try decoder.next(segment, available: available)
                }
            } catch {
                handle(.failed(Self.proxyError(for: error)))
                return
            }
            switch output {
            case .needMore(let consumed):
                input.drain(consumed)
                if inHead { handle(.headBytes(now: worker.nowMicroseconds() / 1000)) }
                if consumed == 0 { return }
            case .head(let head, let consumed):
                input.drain(consumed)
                handle(.requestHead(start(head)))
                if isHandlingEvent {
                    // Raised from an action (the next pipelined request): the head waits in the queue, so the
                    // machine still shows the last request's state. Decoding goes on after it (its body, its end).
                    resumesDecodingAfterEvents = true
                    return
                }
            case .body(let skip, let count):
                input.drain(skip)
                forwardRequestBody(count: count)
                if skip == 0 && count == 0 { return }
            case .end(let consumed):
                input.drain(consumed)
                if let exchange, let upload = exchange.awsChunkedUpload, !finishAWSChunked(exchange, upload) {
                    return
                }
                handle(.requestBodyEnded)
                if isHandlingEvent {
                    resumesDecodingAfterEvents = true  // as for a head: the machine has not seen the end yet
                    return
                }
            }
        }
    }

    static func proxyError(for error: HTTPParseError) -> ProxyError {
        switch error.status {
        case 414: .requestLineTooLong
        case 431: .headersTooLarge
        case 501: .notImplemented("\(error)")
        case 505: .versionNotSupported
        default: .badRequest("\(error)")
        }
    }

    private func forwardRequestBody(count: Int) {
        guard count > 0 else { return }
        guard let exchange else {
            // Nothing takes this body (a local answer): it is read and dropped so the connection stays in sync.
            input.drain(count)
            return
        }
        if exchange.pendingPlan != nil {
            spoolRequestBody(exchange, count: count)
            return
        }
        if let upload = exchange.awsChunkedUpload {
            streamAWSChunked(exchange, upload, count: count)
            return
        }
        keepBodyForRetry(exchange, count: count)
        guard let upstream = exchange.upstream else {
            input.drain(count)
            return
        }
        exchange.requestBodyBytes += count
        moveBytes(from: input, to: upstream.output, count: count)
    }

    /// Routes a head: a local answer, or a signed (or to-be-spooled) exchange.
    private func start(_ head: RequestHead) -> RequestStart {
        let (framing, clientKeepAlive, expectsContinue) =
            (decoder.framing, decoder.isKeepAlive, decoder.expectsContinue)
        let hasBody = framing != .none
        let isHTTP10 = head.version.minor == 0
        let keepAlive = clientKeepAlive && !worker.isDraining
        request = RequestSummary(
            method: head.method, target: head.target, isHTTP10: isHTTP10, framing: framing,
            clientKeepAlive: clientKeepAlive)
        var start = RequestStart(
            route: .stream, hasBody: hasBody, expectsContinue: expectsContinue, keepAlive: keepAlive,
            isHTTP10: isHTTP10)
        do {
            let decision = try RequestRewriter.rewrite(
                head: head, framing: framing, settings: settings, principal: principal)
            switch consume decision {
            case .serviceRoot:
                start.route = .local(serviceRoot(method: head.method))
            case .redirect(let plan):
                request.logPath = plan.path
                start.route = .local(redirect(plan))
            case .forward(let plan):
                // Policy first: only a request the rewriter routed and allowed gets here.
                if let target = plan.cacheRead, !hasBody {
                    start.route = try cacheRoute(target, plan: plan, head: head, isHTTP10: isHTTP10, mayWait: true)
                } else {
                    start.route = try forwardRoute(plan, head: head, hasBody: hasBody, isHTTP10: isHTTP10)
                }
            }
        } catch {
            start.route = .local(.error(error))
        }
        return start
    }

    /// Makes the exchange for a forwarded request: signed now (streamed) or once its body is spooled.
    /// The plan is consumed: it moves into the exchange (kept for retries), signed first from here, so the
    /// request path copies it no more (it is large: the request's headers, its policy verdict).
    func forwardRoute(_ plan: consuming ForwardPlan, head: RequestHead, hasBody: Bool, isHTTP10: Bool)
        throws(ProxyError) -> RequestRoute
    {
        request.logPath = plan.logPath
        var spoolLimit: Int?
        var declaredLength: Int?
        if case .spool(_, let decodedLength) = plan.body {
            declaredLength = decodedLength
            let putSize = settings.upstreams[plan.upstreamIndex].maxPutSize
            var limit = min(settings.maxSpoolSize ?? putSize, putSize, plan.maxUploadSize ?? Int.max)
            if plan.deleteKeysPolicy != nil { limit = min(limit, DeleteObjectsBody.maximumSize) }
            // A declared length over the limit is refused before `100 Continue` invites the body.
            if let decodedLength, decodedLength > limit { throw .entityTooLarge }
            spoolLimit = limit
        }
        let exchange = Exchange(
            id: worker.nextRequest(), method: head.method, logPath: plan.logPath, bucket: plan.bucket,
            upstreamIndex: plan.upstreamIndex, startedAtMicros: worker.nowMicroseconds(), encodedHead: [],
            requestHasBody: hasBody, clientKeepAlive: request.clientKeepAlive, clientIsHTTP10: isHTTP10)
        exchange.cacheInvalidation = plan.cacheInvalidation
        invalidateCache(exchange)
        let operation = plan.verdict.operation
        let token = plan.verdict.token
        if let spoolLimit {
            try startSpool(exchange, plan: plan, limit: spoolLimit, declaredLength: declaredLength)
        } else {
            if case .decodeAWSChunked(let upload) = plan.body {
                exchange.awsChunkedUpload = try AWSChunkedUpload(upload)
            }
            try sign(exchange, plan)
            // A small streamed body is kept so the request can be sent again (`retry_body_buffer`).
            if case .contentLength(let length) = request.framing, length > 0, length <= settings.retryBodyBuffer,
                plan.body == .stream
            {
                var kept: [UInt8] = []
                kept.reserveCapacity(length)
                exchange.retry.body = kept
            }
            exchange.retry.plan = consume plan
        }
        self.exchange = exchange
        exchange.ops.operation = operation.rawValue
        exchange.retry.checksSuccessBody = operation.mayFailAfterSuccessStatus
        if let token {
            exchange.ops.principal = "token:" + token
            exchange.ops.principalLabel = "token:" + token
        } else {
            exchange.ops.principal = principalName
            exchange.ops.principalLabel = principalLabel
        }
        worker.exchangeStarted(exchange, client: peerHost)
        return spoolLimit == nil ? .stream : .spool
    }

    /// Signs the plan now (signing is the last change to a request) and encodes the head.
    func signedHead(_ plan: ForwardPlan, date: AmzDate) throws(ProxyError) -> [UInt8] {
        guard let signer = worker.signer(for: plan.upstreamIndex) else {
            throw worker.signingUnavailable(plan.upstreamIndex)
        }
        var encoded = worker.takeSignedHeadBuffer()
        do {
            try signer.signHead(plan.request, payload: plan.payload, date: date, into: &encoded)
        } catch {
            worker.metrics.signingFailed()
            throw .internalError("signing failed")
        }
        return encoded
    }
}
