/// A client connection's life as a pure function of events: `handle(_:)` moves `state` and returns what the
/// driver (`ClientConnection`) must do, in order. No I/O, no clock: the tests drive it event by event.
struct ConnectionStateMachine {
    private(set) var state = ConnectionState.idle
    /// A head that is still incomplete this long after its first byte is answered 408 (slowloris guard).
    var headerTimeoutMilliseconds: Int
    /// A held answer still incomplete this long after its head is passed on as far as it came (`HeldAnswer`).
    var maxHoldMilliseconds: Int

    /// A request waiting for another request's cache fill this long fetches for itself.
    static let maxCacheWaitMilliseconds = 2000

    init(headerTimeoutMilliseconds: Int, maxHoldMilliseconds: Int = HeldAnswer.maxHoldMilliseconds) {
        self.headerTimeoutMilliseconds = headerTimeoutMilliseconds
        self.maxHoldMilliseconds = maxHoldMilliseconds
    }

    /// Moves `state` for `event` and appends what the driver must do, in order, to `actions` (the driver keeps one
    /// array for the connection's life, so an event allocates nothing).
    mutating func handle(_ event: ConnectionEvent, into actions: inout [ConnectionAction]) {
        switch event {
        case .headBytes(let now): headBytes(now: now, &actions)
        case .requestHead(let start): requestHead(start, &actions)
        case .requestBodyEnded: requestBodyEnded(&actions)
        case .responseHead(let start): responseHead(start, &actions)
        case .answerHeld(let now): answerHeld(now: now)
        case .responseEnded(let reusable): responseEnded(upstreamReusable: reusable, &actions)
        case .revalidatedBodyFollows(let reusable): revalidatedBodyFollows(upstreamReusable: reusable, &actions)
        case .upstreamFailed(let error, let retryable): upstreamFailed(error, retryable: retryable, &actions)
        case .retryUpstream(let delay, let reusable): retryUpstream(after: delay, reusable: reusable, &actions)
        case .retryDue: retryDue(&actions)
        case .failed(let error): failed(error, &actions)
        case .clientEnded(let end): clientEnded(end, &actions)
        case .readTimedOut: readTimedOut(&actions)
        case .writeTimedOut: abort(&actions)
        case .outputFlushed: outputFlushed(&actions)
        case .drain: drain(&actions)
        case .tick(let now): tick(now: now, &actions)
        case .bodyTooSlow: bodyTooSlow(&actions)
        case .cachedBodySent: cachedBodySent(&actions)
        case .cacheSettled(let route): cacheSettled(route, &actions)
        }
    }

    /// `handle(_:into:)` with a fresh array: the actions of this one event.
    mutating func handle(_ event: ConnectionEvent) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        handle(event, into: &actions)
        return actions
    }

    // MARK: Derived

    /// Whether the client's bytes are read at all (backpressure aside). After a complete request they still are,
    /// to notice a close and to buffer a pipelined request, until the client half-closes.
    var wantsClientInput: Bool {
        switch state {
        case .idle, .readingHead: true
        case .exchange(let exchange): exchange.request != .complete || exchange.closeReason != .clientHalfClosed
        case .closingWhenFlushed, .closed: false
        }
    }

    /// Whether buffered client bytes are decoded now: not while a complete request waits for its response
    /// (pipelined requests are answered in order), nor while a retry's backoff runs (body bytes wait for the
    /// next attempt's connection).
    var decodesClientInput: Bool {
        switch state {
        case .idle, .readingHead: true
        case .exchange(let exchange): exchange.request != .complete && exchange.response != .backingOff
        case .closingWhenFlushed, .closed: false
        }
    }

    /// Which timeout the client's read timer runs.
    var clientReadTimeout: ClientReadTimeout {
        switch state {
        case .idle: .idle
        case .readingHead: .header
        case .exchange(let exchange): exchange.request == .complete ? .none : .body
        case .closingWhenFlushed, .closed: .none
        }
    }

    /// The exchange in flight uses an upstream connection.
    var usesUpstream: Bool {
        guard case .exchange(let exchange) = state else { return false }
        return exchange.response.waitsOnUpstream || exchange.response.isStreaming
    }

    /// An upstream answer is held back while it is read (`ResponseProgress.holding`).
    var holdsAnswer: Bool {
        guard case .exchange(let exchange) = state, case .holding = exchange.response else { return false }
        return true
    }

    /// The request waits for another request's cache fill (`ResponseProgress.awaitingCache`).
    var awaitsCache: Bool {
        guard case .exchange(let exchange) = state, case .awaitingCache = exchange.response else { return false }
        return true
    }

    /// The response body streams to the client in this framing.
    var responseFraming: ClientBodyFraming? {
        guard case .exchange(let exchange) = state, case .streaming(let framing) = exchange.response else { return nil }
        return framing
    }

    // MARK: Transitions

    private mutating func headBytes(now: Int, _ actions: inout [ConnectionAction]) {
        switch state {
        case .idle:
            state = .readingHead(startedAt: now)
        case .readingHead(let startedAt) where now - startedAt > headerTimeoutMilliseconds:
            answerAndClose(.error(.requestTimeout), &actions)
        default:
            break
        }
    }

    private mutating func requestHead(_ start: RequestStart, _ actions: inout [ConnectionAction]) {
        switch state {
        case .idle, .readingHead: break
        default: return
        }
        var exchange = ExchangeState(
            request: .streaming, response: .awaitingUpstream, closeReason: start.keepAlive ? nil : .clientAsked,
            isHTTP10: start.isHTTP10, attempts: 1)
        let continues = start.expectsContinue && start.hasBody
        switch start.route {
        case .local(.cached(let cached)) where cached.streamsBody && !start.hasBody:
            // The head and the first slices now, the rest as the output drains; then as any answer.
            exchange.response = .sendingCached(afterUpstream: false)
            state = .exchange(exchange)
            actions.append(.answer(.cached(cached), closing: exchange.closeReason != nil))
        case .local(let answer):
            // An unread body is not skipped: the connection closes after the answer.
            if start.hasBody || exchange.closeReason != nil { return answerAndClose(answer, &actions) }
            exchange.response = .complete
            state = .exchange(exchange)
            actions.append(.answer(answer, closing: false))
        case .stream:
            state = .exchange(exchange)
            if continues { actions.append(.sendContinue) }
            actions.append(.connectUpstream(fresh: false))
        case .spool:
            exchange.request = .spooling
            exchange.response = .awaitingSpool
            state = .exchange(exchange)
            if continues { actions.append(.sendContinue) }
        case .awaitCache(let since):
            exchange.response = .awaitingCache(since: since)
            state = .exchange(exchange)
        }
    }

    /// A request that waited for a cache fill, decided again.
    private mutating func cacheSettled(_ route: RequestRoute, _ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, case .awaitingCache = exchange.response else { return }
        switch route {
        case .local(.cached(let cached)) where cached.streamsBody:
            exchange.response = .sendingCached(afterUpstream: false)
            state = .exchange(exchange)
            actions.append(.answer(.cached(cached), closing: exchange.closeReason != nil))
        case .local(let answer):
            exchange.response = .complete
            actions.append(.answer(answer, closing: exchange.closeReason != nil || exchange.request != .complete))
            if exchange.request == .complete { return endCycle(exchange, &actions) }
            state = .closingWhenFlushed  // an unread body is not skipped
            actions.append(.closeWhenFlushed)
        case .stream, .spool:
            exchange.response = .awaitingUpstream
            state = .exchange(exchange)
            actions.append(.connectUpstream(fresh: false))
        case .awaitCache:
            break  // waiting again: still counted from the first wait (`maxCacheWaitMilliseconds` in all)
        }
    }

    private mutating func requestBodyEnded(_ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state else { return }
        switch exchange.request {
        case .complete:
            break
        case .spooling:
            exchange.request = .complete
            exchange.response = .awaitingUpstream
            state = .exchange(exchange)
            actions.append(.sendSpooledRequest)
        case .streaming:
            exchange.request = .complete
            state = .exchange(exchange)
            if exchange.response == .complete { endCycle(exchange, &actions) }
        }
    }

    private mutating func responseHead(_ start: ResponseStart, _ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, exchange.response.waitsOnUpstream else { return }
        let framing: ClientBodyFraming
        switch start.framing {
        case _ where start.isBodyless: framing = .passThrough
        case .none, .contentLength: framing = .passThrough
        case .chunked, .untilClose: framing = exchange.isHTTP10 ? .untilClose : .rechunked
        }
        if framing == .untilClose { exchange.closeReason = exchange.closeReason ?? .responseUntilClose }
        if exchange.request != .complete { exchange.closeReason = exchange.closeReason ?? .requestBodyUnread }
        exchange.response = .streaming(framing)
        state = .exchange(exchange)
        actions.append(.writeResponseHead(framing, closing: exchange.closeReason != nil))
    }

    private mutating func responseEnded(upstreamReusable: Bool, _ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, case .streaming(let framing) = exchange.response else { return }
        if framing == .rechunked { actions.append(.finishResponseBody) }
        actions.append(.releaseUpstream(reusable: upstreamReusable && exchange.request == .complete))
        actions.append(.endExchange(completed: true))
        exchange.response = .complete
        if exchange.request == .complete { return endCycle(exchange, &actions) }
        // The upstream answered before the body was complete: the rest of it is never read.
        state = .closingWhenFlushed
        actions.append(.closeWhenFlushed)
    }

    private mutating func revalidatedBodyFollows(upstreamReusable: Bool, _ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, case .streaming(.passThrough) = exchange.response else { return }
        actions.append(.releaseUpstream(reusable: upstreamReusable && exchange.request == .complete))
        exchange.response = .sendingCached(afterUpstream: true)
        state = .exchange(exchange)
    }

    private mutating func cachedBodySent(_ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, case .sendingCached(let afterUpstream) = exchange.response else {
            return
        }
        if afterUpstream { actions.append(.endExchange(completed: true)) }
        exchange.response = .complete
        if exchange.request == .complete { return endCycle(exchange, &actions) }
        state = .exchange(exchange)
    }

    private mutating func answerHeld(now: Int) {
        guard case .exchange(var exchange) = state, exchange.response == .awaitingUpstream else { return }
        exchange.response = .holding(since: now)
        state = .exchange(exchange)
    }

    private mutating func upstreamFailed(_ error: ProxyError, retryable: Bool, _ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state else { return }
        if exchange.response == .awaitingUpstream && retryable && exchange.attempts == 1 {
            exchange.attempts += 1
            state = .exchange(exchange)
            actions.append(.releaseUpstream(reusable: false))
            actions.append(.connectUpstream(fresh: true))
            return
        }
        failed(error, &actions)
    }

    /// Only before anything of a response went to the client: the machine is the guard of that rule.
    private mutating func retryUpstream(after delay: Int, reusable: Bool, _ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, exchange.response.waitsOnUpstream else { return }
        exchange.attempts += 1
        actions.append(.releaseUpstream(reusable: reusable))
        if delay > 0 {
            exchange.response = .backingOff
            actions.append(.scheduleRetry(milliseconds: delay))
        } else {
            exchange.response = .awaitingUpstream
            actions.append(.connectUpstream(fresh: false))
        }
        state = .exchange(exchange)
    }

    private mutating func retryDue(_ actions: inout [ConnectionAction]) {
        guard case .exchange(var exchange) = state, exchange.response == .backingOff else { return }
        exchange.response = .awaitingUpstream
        state = .exchange(exchange)
        actions.append(.connectUpstream(fresh: false))
    }

    private mutating func failed(_ error: ProxyError, _ actions: inout [ConnectionAction]) {
        switch state {
        case .idle, .readingHead:
            answerAndClose(.error(error), &actions)
        case .exchange(let exchange):
            switch exchange.response {
            case .streaming, .sendingCached:
                abort(&actions)
            case .complete:
                state = .closed
                actions.append(.close)
            case .awaitingSpool, .awaitingUpstream, .holding, .backingOff, .awaitingCache:
                // Nothing of a response went out yet: the client gets an S3 error.
                if exchange.response.waitsOnUpstream { actions.append(.releaseUpstream(reusable: false)) }
                if exchange.request != .complete || exchange.closeReason != nil {
                    return answerAndClose(.error(error), &actions)
                }
                state = .idle
                actions.append(.answer(.error(error), closing: false))
                actions.append(.readNextRequest)
            }
        case .closingWhenFlushed, .closed:
            break
        }
    }

    private mutating func clientEnded(_ end: ClientEnd, _ actions: inout [ConnectionAction]) {
        if end == .endOfFile, case .exchange(var exchange) = state, exchange.request == .complete,
            exchange.response != .complete
        {
            // A half-close after a complete request (shutdown(SHUT_WR)): it is still answered, then closed.
            exchange.closeReason = .clientHalfClosed
            state = .exchange(exchange)
            return
        }
        abort(&actions)
    }

    private mutating func readTimedOut(_ actions: inout [ConnectionAction]) {
        switch state {
        case .idle, .closingWhenFlushed:
            state = .closed
            actions.append(.close)
        case .readingHead:
            answerAndClose(.error(.requestTimeout), &actions)
        case .exchange(let exchange):
            // A stalled request body: nothing sane can be answered mid-stream.
            if exchange.request != .complete { abort(&actions) }
        case .closed:
            break
        }
    }

    private mutating func outputFlushed(_ actions: inout [ConnectionAction]) {
        guard state == .closingWhenFlushed else { return }
        state = .closed
        actions.append(.close)
    }

    private mutating func drain(_ actions: inout [ConnectionAction]) {
        switch state {
        case .idle:
            state = .closed
            actions.append(.close)
        case .exchange(var exchange):
            exchange.closeReason = exchange.closeReason ?? .draining
            state = .exchange(exchange)
        case .readingHead, .closingWhenFlushed, .closed:
            // A head in progress is answered with `Connection: close` (the driver no longer keeps connections).
            break
        }
    }

    // MARK: Helpers

    /// Ends the connection now, whatever it was doing: an exchange in flight is cut short. A close-delimited
    /// body to the client ends with a reset, so the client cannot take it for complete (bug i).
    private mutating func abort(_ actions: inout [ConnectionAction]) {
        if state == .closed { return }
        var ending = ConnectionAction.close
        if case .exchange(let exchange) = state {
            if exchange.response.waitsOnUpstream || exchange.response.isStreaming {
                actions.append(.releaseUpstream(reusable: false))
            }
            if exchange.response != .complete { actions.append(.endExchange(completed: false)) }
            if case .streaming(.untilClose) = exchange.response { ending = .reset }
        }
        state = .closed
        actions.append(ending)
    }

    private mutating func answerAndClose(_ answer: LocalAnswer, _ actions: inout [ConnectionAction]) {
        state = .closingWhenFlushed
        actions.append(.answer(answer, closing: true))
        actions.append(.closeWhenFlushed)
    }

    /// Request and response are both complete.
    private mutating func endCycle(_ exchange: ExchangeState, _ actions: inout [ConnectionAction]) {
        if exchange.closeReason != nil {
            state = .closingWhenFlushed
            actions.append(.closeWhenFlushed)
            return
        }
        state = .idle
        actions.append(.readNextRequest)
    }
}

extension ResponseProgress {
    var isStreaming: Bool {
        if case .streaming = self { return true }
        return false
    }

    /// An upstream connection is open and nothing of its answer went to the client: a retry is still possible.
    var waitsOnUpstream: Bool {
        switch self {
        case .awaitingUpstream, .holding: true
        case .awaitingSpool, .backingOff, .streaming, .sendingCached, .awaitingCache, .complete: false
        }
    }
}

// MARK: Limits at the edge (issue 20)

extension ConnectionStateMachine {
    /// Which body `min_body_rate` measures now, if any: the request's while it is read and nothing of a response
    /// has gone out, the response's while it streams.
    var measuredBody: MeasuredBody? {
        guard case .exchange(let exchange) = state else { return nil }
        if exchange.response.isStreaming { return .response }
        if case .sendingCached = exchange.response { return .response }
        if exchange.request != .complete && exchange.response != .complete { return .request }
        return nil
    }

    /// The head deadline counts from the head's first byte, not from the last read; a held answer's from its head.
    fileprivate mutating func tick(now: Int, _ actions: inout [ConnectionAction]) {
        switch state {
        case .readingHead(let startedAt) where now - startedAt > headerTimeoutMilliseconds:
            answerAndClose(.error(.requestTimeout), &actions)
        case .exchange(let exchange):
            if case .awaitingCache(let since) = exchange.response, now - since >= Self.maxCacheWaitMilliseconds {
                actions.append(.stopWaitingForCache)
                return
            }
            guard case .holding(let since) = exchange.response, now - since >= maxHoldMilliseconds else { return }
            // The driver writes the head (`responseHead` follows) and streams the rest: the client hears from it
            // before its SDK's read timeout, and a late `<Error>` is the SDK's to read.
            actions.append(.passOnHeldAnswer)
        default:
            break
        }
    }

    /// A request body too slow: the upstream request is dropped mid-body (the upstream sees it incomplete and
    /// stores nothing) and the client gets 408. A response too slow is cut like any response cut short.
    fileprivate mutating func bodyTooSlow(_ actions: inout [ConnectionAction]) {
        guard case .exchange(let exchange) = state else { return }
        switch exchange.response {
        case .awaitingSpool, .awaitingUpstream, .holding, .backingOff, .awaitingCache:
            guard exchange.request != .complete else { return }
            if exchange.response.waitsOnUpstream { actions.append(.releaseUpstream(reusable: false)) }
            answerAndClose(.error(.bodyTooSlow), &actions)
        case .streaming, .sendingCached:
            abort(&actions)
        default:
            break
        }
    }
}

/// The body `min_body_rate` applies to.
enum MeasuredBody: Equatable {
    case request
    case response
}
