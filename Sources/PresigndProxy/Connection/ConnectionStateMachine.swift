/// A client connection's life as a pure function of events: `handle(_:)` moves `state` and returns what the
/// driver (`ClientConnection`) must do, in order. No I/O, no clock: the tests drive it event by event.
struct ConnectionStateMachine {
    private(set) var state = ConnectionState.idle
    /// A head that is still incomplete this long after its first byte is answered 408 (slowloris guard).
    var headerTimeoutMilliseconds: Int

    init(headerTimeoutMilliseconds: Int) {
        self.headerTimeoutMilliseconds = headerTimeoutMilliseconds
    }

    mutating func handle(_ event: ConnectionEvent) -> [ConnectionAction] {
        switch event {
        case .headBytes(let now): headBytes(now: now)
        case .requestHead(let start): requestHead(start)
        case .requestBodyEnded: requestBodyEnded()
        case .responseHead(let start): responseHead(start)
        case .responseEnded(let reusable): responseEnded(upstreamReusable: reusable)
        case .upstreamFailed(let error, let retryable): upstreamFailed(error, retryable: retryable)
        case .failed(let error): failed(error)
        case .clientEnded(let end): clientEnded(end)
        case .readTimedOut: readTimedOut()
        case .writeTimedOut: abort()
        case .outputFlushed: outputFlushed()
        case .drain: drain()
        }
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
    /// (pipelined requests are answered in order).
    var decodesClientInput: Bool {
        switch state {
        case .idle, .readingHead: true
        case .exchange(let exchange): exchange.request != .complete
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
        return exchange.response == .awaitingUpstream || exchange.response.isStreaming
    }

    /// The response body streams to the client in this framing.
    var responseFraming: ClientBodyFraming? {
        guard case .exchange(let exchange) = state, case .streaming(let framing) = exchange.response else { return nil }
        return framing
    }

    // MARK: Transitions

    private mutating func headBytes(now: Int) -> [ConnectionAction] {
        switch state {
        case .idle:
            state = .readingHead(startedAt: now)
            return []
        case .readingHead(let startedAt) where now - startedAt > headerTimeoutMilliseconds:
            return answerAndClose(.error(.requestTimeout))
        default:
            return []
        }
    }

    private mutating func requestHead(_ start: RequestStart) -> [ConnectionAction] {
        switch state {
        case .idle, .readingHead: break
        default: return []
        }
        var exchange = ExchangeState(
            request: .streaming, response: .awaitingUpstream, closeReason: start.keepAlive ? nil : .clientAsked,
            isHTTP10: start.isHTTP10, attempts: 1)
        let continues: [ConnectionAction] = start.expectsContinue && start.hasBody ? [.sendContinue] : []
        switch start.route {
        case .local(let answer):
            // An unread body is not skipped: the connection closes after the answer.
            if start.hasBody || exchange.closeReason != nil { return answerAndClose(answer) }
            exchange.response = .complete
            state = .exchange(exchange)
            return [.answer(answer, closing: false)]
        case .stream:
            state = .exchange(exchange)
            return continues + [.connectUpstream(fresh: false)]
        case .spool:
            exchange.request = .spooling
            exchange.response = .awaitingSpool
            state = .exchange(exchange)
            return continues
        }
    }

    private mutating func requestBodyEnded() -> [ConnectionAction] {
        guard case .exchange(var exchange) = state else { return [] }
        switch exchange.request {
        case .complete:
            return []
        case .spooling:
            exchange.request = .complete
            exchange.response = .awaitingUpstream
            state = .exchange(exchange)
            return [.sendSpooledRequest]
        case .streaming:
            exchange.request = .complete
            state = .exchange(exchange)
            return exchange.response == .complete ? endCycle(exchange) : []
        }
    }

    private mutating func responseHead(_ start: ResponseStart) -> [ConnectionAction] {
        guard case .exchange(var exchange) = state, exchange.response == .awaitingUpstream else { return [] }
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
        return [.writeResponseHead(framing, closing: exchange.closeReason != nil)]
    }

    private mutating func responseEnded(upstreamReusable: Bool) -> [ConnectionAction] {
        guard case .exchange(var exchange) = state, case .streaming(let framing) = exchange.response else { return [] }
        var actions: [ConnectionAction] = framing == .rechunked ? [.finishResponseBody] : []
        actions.append(.releaseUpstream(reusable: upstreamReusable && exchange.request == .complete))
        actions.append(.endExchange(completed: true))
        exchange.response = .complete
        if exchange.request == .complete { return actions + endCycle(exchange) }
        // The upstream answered before the body was complete: the rest of it is never read.
        state = .closingWhenFlushed
        return actions + [.closeWhenFlushed]
    }

    private mutating func upstreamFailed(_ error: ProxyError, retryable: Bool) -> [ConnectionAction] {
        guard case .exchange(var exchange) = state else { return [] }
        if exchange.response == .awaitingUpstream && retryable && exchange.attempts == 1 {
            exchange.attempts += 1
            state = .exchange(exchange)
            return [.releaseUpstream(reusable: false), .connectUpstream(fresh: true)]
        }
        return failed(error)
    }

    private mutating func failed(_ error: ProxyError) -> [ConnectionAction] {
        switch state {
        case .idle, .readingHead:
            return answerAndClose(.error(error))
        case .exchange(let exchange):
            switch exchange.response {
            case .streaming:
                return abort()
            case .complete:
                state = .closed
                return [.close]
            case .awaitingSpool, .awaitingUpstream:
                // Nothing of a response went out yet: the client gets an S3 error.
                let release: [ConnectionAction] =
                    exchange.response == .awaitingUpstream ? [.releaseUpstream(reusable: false)] : []
                if exchange.request != .complete || exchange.closeReason != nil {
                    return release + answerAndClose(.error(error))
                }
                state = .idle
                return release + [.answer(.error(error), closing: false), .readNextRequest]
            }
        case .closingWhenFlushed, .closed:
            return []
        }
    }

    private mutating func clientEnded(_ end: ClientEnd) -> [ConnectionAction] {
        if end == .endOfFile, case .exchange(var exchange) = state, exchange.request == .complete,
            exchange.response != .complete
        {
            // A half-close after a complete request (shutdown(SHUT_WR)): it is still answered, then closed.
            exchange.closeReason = .clientHalfClosed
            state = .exchange(exchange)
            return []
        }
        return abort()
    }

    private mutating func readTimedOut() -> [ConnectionAction] {
        switch state {
        case .idle, .closingWhenFlushed:
            state = .closed
            return [.close]
        case .readingHead:
            return answerAndClose(.error(.requestTimeout))
        case .exchange(let exchange):
            // A stalled request body: nothing sane can be answered mid-stream.
            return exchange.request == .complete ? [] : abort()
        case .closed:
            return []
        }
    }

    private mutating func outputFlushed() -> [ConnectionAction] {
        guard state == .closingWhenFlushed else { return [] }
        state = .closed
        return [.close]
    }

    private mutating func drain() -> [ConnectionAction] {
        switch state {
        case .idle:
            state = .closed
            return [.close]
        case .exchange(var exchange):
            exchange.closeReason = exchange.closeReason ?? .draining
            state = .exchange(exchange)
            return []
        case .readingHead, .closingWhenFlushed, .closed:
            // A head in progress is answered with `Connection: close` (the driver no longer keeps connections).
            return []
        }
    }

    // MARK: Helpers

    /// Ends the connection now, whatever it was doing: an exchange in flight is cut short. A close-delimited
    /// body to the client ends with a reset, so the client cannot take it for complete (bug i).
    private mutating func abort() -> [ConnectionAction] {
        if state == .closed { return [] }
        var actions: [ConnectionAction] = []
        var ending = ConnectionAction.close
        if case .exchange(let exchange) = state {
            if exchange.response == .awaitingUpstream || exchange.response.isStreaming {
                actions.append(.releaseUpstream(reusable: false))
            }
            if exchange.response != .complete { actions.append(.endExchange(completed: false)) }
            if case .streaming(.untilClose) = exchange.response { ending = .reset }
        }
        state = .closed
        return actions + [ending]
    }

    private mutating func answerAndClose(_ answer: LocalAnswer) -> [ConnectionAction] {
        state = .closingWhenFlushed
        return [.answer(answer, closing: true), .closeWhenFlushed]
    }

    /// Request and response are both complete.
    private mutating func endCycle(_ exchange: ExchangeState) -> [ConnectionAction] {
        if exchange.closeReason != nil {
            state = .closingWhenFlushed
            return [.closeWhenFlushed]
        }
        state = .idle
        return [.readNextRequest]
    }
}

extension ResponseProgress {
    var isStreaming: Bool {
        if case .streaming = self { return true }
        return false
    }
}
