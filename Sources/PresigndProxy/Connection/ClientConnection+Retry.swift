import PresigndHTTP1
import PresigndIO
import PresigndSigV4

/// Retries (issue 21 §3, §4): every attempt signed afresh with the upstream's corrected time, error answers held
/// back until the policy has judged them, the body kept so it can be sent again. The decision is `RetryPolicy`'s;
/// `ConnectionStateMachine` allows a retry only while nothing of a response has gone to the client.
extension ClientConnection {
    /// Signs the exchange's plan for the next attempt: a fresh date, the upstream's clock offset included.
    func signAttempt(_ exchange: Exchange) throws(ProxyError) {
        guard let plan = exchange.retry.plan else { throw .internalError("no request to sign") }
        try sign(exchange, plan)
    }

    /// Signs `plan` with a fresh date (the upstream's clock offset included) into the exchange's encoded head.
    func sign(_ exchange: Exchange, _ plan: borrowing ForwardPlan) throws(ProxyError) {
        let date = worker.signingDate(upstream: exchange.upstreamIndex, settings: settings)
        worker.recycleSignedHead(of: exchange)
        exchange.encodedHead = try signedHead(plan, date: date)
        exchange.retry.signedAt = date.epochSeconds
    }

    /// Gets the body ready to go again on the next attempt: a spool rewound to its start. Called before a retry's
    /// head is sent; the in-memory body follows the head (`resendKeptBody`).
    func rewindBodyForRetry(_ exchange: Exchange) throws(ProxyError) {
        if let spool = exchange.retry.sentSpool {
            exchange.retry.sentSpool = nil
            exchange.spool = spool
        }
        try exchange.spool?.rewind()
    }

    /// Whether the request can be sent again: no body, a body kept whole (in memory or spooled), or none of it
    /// sent yet. POST is sent again only after an answer or a failed connect (`RetryableRequest.notIdempotent`).
    func retryableRequest(_ exchange: Exchange) -> RetryableRequest {
        let bodyKept =
            !exchange.requestHasBody || exchange.requestBodyBytes == 0 || exchange.retry.body != nil
            || exchange.retry.sentSpool != nil || (exchange.spool != nil && exchange.pendingPlan == nil)
        guard bodyKept else { return .bodySent }
        return exchange.method == "POST" ? .notIdempotent : .replayable
    }

    /// Copies body bytes about to leave into the kept body, or stops keeping it once it outgrows
    /// `retry_body_buffer` (from then on the request is not sent again).
    func keepBodyForRetry(_ exchange: Exchange, count: Int) {
        // Taken out, grown, put back: the exchange's retry state is not held across the copy (which would make
        // every access to it a checked one), and the kept bytes stay uniquely referenced (no copy on append).
        guard var kept = exchange.retry.body.take() else { return }
        guard kept.count + count <= settings.retryBodyBuffer else { return }
        kept.append(contentsOf: input.copyOut(count))
        exchange.retry.body = kept
    }

    /// The metrics slot of the exchange's upstream.
    private func retrySlot(_ exchange: Exchange) -> Int {
        if let slot = exchange.ops.upstreamSlot { return slot }
        return settings === worker.settings
            ? worker.metricSlots[exchange.upstreamIndex]
            : worker.metrics.upstreamSlot(named: settings.upstreams[exchange.upstreamIndex].name)
    }

    /// Asks the policy about a failed attempt and counts what it decided.
    private func decideRetry(_ exchange: Exchange, _ outcome: AttemptOutcome, retryAfterMilliseconds: Int? = nil)
        -> RetryDecision
    {
        var budget = worker.retryBudget  // a local for the call: the worker's is not held across it
        let decision = settings.upstreams[exchange.upstreamIndex].retry.decide(
            attempt: max(1, exchange.ops.attempts), outcome: outcome, request: retryableRequest(exchange),
            retryAfterMilliseconds: retryAfterMilliseconds, budget: &budget, jitter: Double.random(in: 0...1))
        worker.retryBudget = budget
        switch decision {
        case .retry(_, let reason): worker.metrics.retried(slot: retrySlot(exchange), reason: reason)
        case .giveUp(let refusal?): worker.metrics.retryRefused(slot: retrySlot(exchange), refusal)
        case .giveUp(nil): break
        }
        return decision
    }

    private func startRetry(_ exchange: Exchange, after delay: Int, reason: RetryReason, reusable: Bool) {
        worker.logger.info(
            "Retrying upstream request",
            metadata: [
                "request.id": exchange.requestID, "upstream": settings.upstreams[exchange.upstreamIndex].name,
                "retry.reason": reason.rawValue, "upstream.attempts": String(exchange.ops.attempts),
                "retry.delay.ms": String(delay),
            ])
        handle(.retryUpstream(afterMilliseconds: delay, upstreamReusable: reusable))
    }

    /// An attempt failed before any byte of a response: true when it is tried again, false when the caller
    /// reports the failure.
    func retryFailedAttempt(_ exchange: Exchange, _ outcome: AttemptOutcome) -> Bool {
        guard machine.responseFraming == nil,
            case .retry(let delay, let reason) = decideRetry(exchange, outcome)
        else { return false }
        startRetry(exchange, after: delay, reason: reason, reusable: false)
        return true
    }

    /// The backoff timer fired: the next attempt goes out, and body bytes that waited meanwhile follow it.
    func retryDue() {
        handle(.retryDue)
        processClientInput()
        settle()
    }

    /// Starts the backoff timer (made on first use: most connections never retry).
    func scheduleRetry(milliseconds: Int) {
        if retryTimer == nil { retryTimer = try? LoopTimer(loop: worker.loop) { [unowned self] in self.retryDue() } }
        guard let retryTimer, (try? retryTimer.scheduleAtLeast(milliseconds: milliseconds)) != nil else {
            handle(.retryDue)
            return
        }
    }

    // MARK: Held answers

    /// Whether a response head waits, with its body, for the policy instead of going to the client at once: an
    /// error that may be retried (429, 5xx, or a 400/403 that may be a clock-skew rejection), or the 200 of an
    /// operation S3 may still fail in its body (`<Error>` after the head, issue 21 §3).
    func holdsAnswer(_ head: ResponseHead, _ exchange: Exchange) -> Bool {
        let status = head.status
        let retryable = AttemptOutcome.answered(status: status, code: nil).retryReason != nil
        let skewCandidate = (status == 400 || status == 403) && !exchange.retry.correctedClock
        let successToCheck = status == 200 && exchange.retry.checksSuccessBody
        // A 404 the cache would remember (`negative_ttl`) is read whole: only a `NoSuchKey` is remembered.
        let missingToCheck = status == 404 && exchange.cacheFill?.remembersMissing == true
        guard retryable || skewCandidate || successToCheck || missingToCheck else { return false }
        guard retryableRequest(exchange) != .bodySent else {
            // Never sent again: the client's SDK retries it (issue 21 §3).
            if retryable { worker.metrics.retryRefused(slot: retrySlot(exchange), .bodySent) }
            return false
        }
        return true
    }

    /// Takes `count` bytes of a held answer's body; false when the body outgrew `HeldAnswer.limit` (the answer
    /// then goes to the client as it is, and these bytes with it).
    func holdAnswerBody(_ exchange: Exchange, from input: IOBuffer, count: Int) -> Bool {
        guard var held = exchange.retry.held.take() else { return false }  // taken: see `keepBodyForRetry`
        guard held.body.count + count <= HeldAnswer.limit else {
            passOn(held, exchange, code: nil, ended: false, upstreamReusable: false)
            return false
        }
        held.body.append(contentsOf: input.copyOut(count))
        exchange.retry.held = held
        input.drain(count)
        return true
    }

    /// A held answer is complete: retried (after a clock correction, or as the policy decides), or passed on.
    func finishHeldAnswer(_ exchange: Exchange, upstreamReusable reusable: Bool) {
        guard let held = exchange.retry.held else { return }
        exchange.retry.held = nil
        let code = held.s3ErrorCode
        let upstreamDate = worker.observeUpstreamDate(
            held.head, upstream: exchange.upstreamIndex, settings: settings, always: true)
        if !exchange.retry.correctedClock, retryableRequest(exchange) != .bodySent,
            ClockSkew.isSkewRejection(code: code, upstreamDate: upstreamDate, signedAt: exchange.retry.signedAt)
        {
            // Once per request, whatever max_attempts and the budget say: the clock is corrected now.
            exchange.retry.correctedClock = true
            worker.metrics.retried(slot: retrySlot(exchange), reason: .clockSkew)
            startRetry(exchange, after: 0, reason: .clockSkew, reusable: reusable)
            return
        }
        let now = worker.nowMicroseconds() / 1_000_000
        let retryAfter = held.head.firstValue(ofLowercasedField: "retry-after").flatMap {
            RetryPolicy.retryAfterMilliseconds($0, upstreamDate: upstreamDate, now: now)
        }
        let outcome = AttemptOutcome.answered(status: held.head.status, code: code)
        if case .retry(let delay, let reason) = decideRetry(exchange, outcome, retryAfterMilliseconds: retryAfter) {
            startRetry(exchange, after: delay, reason: reason, reusable: reusable)
            return
        }
        passOn(held, exchange, code: code, ended: true, upstreamReusable: reusable)
    }

    /// A held answer outlasted `HeldAnswer.maxHoldMilliseconds` (the machine's `passOnHeldAnswer`): what came of
    /// it goes to the client now and the rest streams as it arrives, never to be retried.
    func passOnHeldAnswer() {
        guard let exchange, let held = exchange.retry.held else { return }
        exchange.retry.held = nil
        passOn(held, exchange, code: nil, ended: false, upstreamReusable: false)
    }

    /// Sends a held answer to the client after all: its head, what was read of its body, and its end. `code`: the
    /// S3 error code of its whole body, when it has one (a 200 carrying `<Error>` is a failure, not a success).
    private func passOn(
        _ held: HeldAnswer, _ exchange: Exchange, code: String?, ended: Bool, upstreamReusable: Bool
    ) {
        if held.head.status < 300, let code { exchange.ops.errorCode = code }
        // Written right after the head (`writeHeldBody`): passed on from an action (`passOnHeldAnswer`), the head's
        // event waits in the connection's queue until that action is done.
        exchange.retry.heldBody = held.body
        exchange.cacheFill?.errorCode = code
        guard let sent = throughCache(held.head, exchange) else {
            handle(.failed(exchange.cacheFill?.failure ?? .upstreamProtocol("the range answer does not fit")))
            return
        }
        answerArrived(sent, exchange, code: code)
        if ended { handle(.responseEnded(upstreamReusable: upstreamReusable)) }
    }

    /// What was read of a held answer's body, once its head is written.
    func writeHeldBody(_ exchange: Exchange) {
        guard let body = exchange.retry.heldBody else { return }
        exchange.retry.heldBody = nil
        guard !body.isEmpty else { return }
        exchange.responseBodyBytes += body.count
        if machine.responseFraming == .rechunked {
            writeChunkHeader(size: body.count)
            write(body)
            write("\r\n")
        } else {
            write(body)
        }
    }

    /// A final answer goes to the client: the retry budget hears how the request went, the machine gets the head.
    func answerArrived(_ head: consuming ResponseHead, _ exchange: Exchange, code: String? = nil) {
        let status = head.status
        if AttemptOutcome.answered(status: status, code: code).retryReason == nil {
            worker.retryBudget.succeeded(afterRetries: max(0, exchange.ops.attempts - 1))
        }
        exchange.responseHead = consume head  // moved into the exchange, taken out by `writeResponseHead`
        exchange.responseStatus = status  // what the client gets (a cached head, a 416 of a widened range)
        let bodyless = exchange.method == "HEAD" || status == 204 || status == 304
        handle(.responseHead(ResponseStart(framing: exchange.responseDecoder.framing, isBodyless: bodyless)))
    }
}
