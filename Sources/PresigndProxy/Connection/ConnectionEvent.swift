import PresigndHTTP1

/// What happened on a client connection, as its driver tells `ConnectionStateMachine`. The cases that carry text
/// (errors, local answers) are `indirect`: the events and actions of an ordinary request stay a few words of plain
/// data, cheap to copy and switch over.
enum ConnectionEvent: Equatable {
    /// Bytes of a head arrived, but not the whole head yet (`now`: milliseconds).
    case headBytes(now: Int)
    /// A whole request head arrived and was routed.
    case requestHead(RequestStart)
    /// The request body (possibly empty) is complete: the decoder's `.end`.
    case requestBodyEnded
    /// The upstream's final (non-1xx) response head arrived.
    case responseHead(ResponseStart)
    /// The upstream's response body is complete; `upstreamReusable`: the upstream connection may be pooled.
    case responseEnded(upstreamReusable: Bool)
    /// The upstream confirmed a cached answer (a revalidation's 304) whose slices do not fit one write: the
    /// upstream is done, the rest of the slices follow as the output drains, and the exchange ends with the last.
    case revalidatedBodyFollows(upstreamReusable: Bool)
    /// The upstream connection failed or sent something invalid. `retryable`: no byte of a response arrived
    /// on a reused pooled connection and the request may be sent again.
    indirect case upstreamFailed(ProxyError, retryable: Bool)
    /// The upstream's final head arrived and is held with its body (`HeldAnswer`) until the policy has judged it
    /// (`now`: milliseconds).
    case answerHeld(now: Int)
    /// The retry policy sends the request again after this many milliseconds: the attempt failed or was answered
    /// with an error nothing of which went to the client. `upstreamReusable`: the answer was read whole and the
    /// connection may be pooled.
    case retryUpstream(afterMilliseconds: Int, upstreamReusable: Bool)
    /// The backoff timer of `retryUpstream` fired.
    case retryDue
    /// presignd cannot go on with the request: a malformed head or body, a spool or signing failure.
    indirect case failed(ProxyError)
    /// The client's side ended: an orderly half-close (`.endOfFile`) or an abort.
    case clientEnded(ClientEnd)
    /// Nothing arrived from the client within the state's read timeout.
    case readTimedOut
    /// The client took nothing of the pending output within the write timeout.
    case writeTimedOut
    /// The output to the client is empty.
    case outputFlushed
    /// The worker is shutting down.
    case drain
    /// The worker's periodic check (`now`: milliseconds): a head still incomplete past the header timeout is cut,
    /// however its bytes trickle in (an absolute deadline, issue 20).
    case tick(now: Int)
    /// A body moved slower than `min_body_rate` over its window (`BodyRateMeter`, issue 20).
    case bodyTooSlow
    /// The last slice of a cached answer that streams its body (`CachedResponse.streamsBody`) is queued.
    case cachedBodySent
    /// A request waiting for a cache fill was decided again: answered from the cache, sent upstream, or waiting
    /// again.
    indirect case cacheSettled(RequestRoute)
}

/// How a client's side of a connection ended.
enum ClientEnd: Equatable {
    case endOfFile
    case aborted
}

/// A routed request head, as far as the connection's life is concerned.
struct RequestStart: Equatable {
    var route: RequestRoute
    var hasBody: Bool
    var expectsContinue: Bool
    /// The client allows another request on this connection (and the worker is not draining).
    var keepAlive: Bool
    var isHTTP10: Bool

    init(
        route: RequestRoute, hasBody: Bool, expectsContinue: Bool = false, keepAlive: Bool = true,
        isHTTP10: Bool = false
    ) {
        self.route = route
        self.hasBody = hasBody
        self.expectsContinue = expectsContinue
        self.keepAlive = keepAlive
        self.isHTTP10 = isHTTP10
    }
}

/// Where a request goes.
enum RequestRoute: Equatable {
    /// Signed now and streamed to the upstream, body and all.
    case stream
    /// The body is spooled first (length-less, or unwrapped aws-chunked), then signed and sent.
    case spool
    /// Answered by presignd itself (an error, the service root, a redirect).
    indirect case local(LocalAnswer)
    /// Waits for another request's cache fill (single-flight, issue 23 §5) since `since` (milliseconds); then
    /// decided again (`cacheSettled`).
    case awaitCache(since: Int)
}

/// A response presignd writes itself.
enum LocalAnswer: Equatable {
    case error(ProxyError)
    /// Prepared by the driver (the service root's bucket list, a redirect): written as it is.
    case prepared(PreparedResponse)
    /// From the read cache (issue 23): the head, and the slices the connection holds open (`openedSlices`).
    case cached(CachedResponse)
}

/// A cached answer: written by `ClientConnection.writeCached`.
struct CachedResponse: Equatable {
    var head: CachedHead
    var method: String
    var logPath: String
    /// More slices than one write queues: the rest follow as the output drains (`ResponseProgress.sendingCached`).
    var streamsBody = false
}

/// A complete local response other than an error.
struct PreparedResponse: Equatable {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var extraHeaders: [(String, String)]
    var method: String
    /// The access log's path.
    var logPath: String
    /// The bucket for metrics (`redirect` counts per bucket), if any.
    var redirectBucket: String?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.status == rhs.status && lhs.contentType == rhs.contentType && lhs.body == rhs.body
            && lhs.extraHeaders.elementsEqual(rhs.extraHeaders, by: { $0 == $1 }) && lhs.method == rhs.method
            && lhs.logPath == rhs.logPath && lhs.redirectBucket == rhs.redirectBucket
    }
}

/// The upstream's final response head, as far as the connection's life is concerned.
struct ResponseStart: Equatable {
    var framing: BodyFraming
    /// HEAD, 204 or 304: no body whatever the fields say.
    var isBodyless: Bool
}

/// What the driver does next, in order.
enum ConnectionAction: Equatable {
    /// `100 Continue` (R2 never sends one: presignd answers it, DESIGN §2).
    case sendContinue
    /// Take a pooled upstream connection (or a `fresh` one) and send the signed head.
    case connectUpstream(fresh: Bool)
    /// Start the backoff timer; `retryDue` follows.
    case scheduleRetry(milliseconds: Int)
    /// The spooled body is complete: sign with its length, connect, send.
    case sendSpooledRequest
    case writeResponseHead(ClientBodyFraming, closing: Bool)
    /// The last chunk of a re-chunked body.
    case finishResponseBody
    /// A held answer took too long: its head and what arrived of its body go to the client now, the rest streams.
    case passOnHeldAnswer
    /// A request waited for a cache fill too long: decide it again without waiting (`cacheSettled` follows).
    case stopWaitingForCache
    case releaseUpstream(reusable: Bool)
    /// Writes a local answer; it ends the exchange's accounting when there is one.
    indirect case answer(LocalAnswer, closing: Bool)
    /// Counts and logs the forwarded exchange, once.
    case endExchange(completed: Bool)
    /// Decode what the client has sent next (pipelined bytes may already be waiting).
    case readNextRequest
    case closeWhenFlushed
    case close
    /// Close with `SO_LINGER` 0: the client sees a reset, the only sign of a close-delimited body cut short.
    case reset
}
