/// Where a client connection is in its life (docs/ARCHITECTURE.md has the diagram). Each case carries exactly
/// what that state needs; `ConnectionStateMachine` is the only code that moves between them.
enum ConnectionState: Equatable {
    /// Between requests, no byte of the next head seen (keep-alive idle timeout).
    case idle
    /// Part of a head has arrived; the header timeout counts from `startedAt` (milliseconds).
    case readingHead(startedAt: Int)
    /// One request is being handled (responses go out in order: pipelined requests wait in the input buffer).
    case exchange(ExchangeState)
    /// Everything is answered: the output drains, then the connection closes.
    case closingWhenFlushed
    case closed
}

/// The request and response sides of one exchange. They progress independently: an upstream may answer before
/// the request body is complete (then the connection closes after the response: the rest of the body is unread).
struct ExchangeState: Equatable {
    var request: RequestProgress
    var response: ResponseProgress
    /// Why the connection closes after this exchange; nil while it may stay open for the next request.
    var closeReason: CloseReason?
    /// The client spoke HTTP/1.0 (no chunked responses; keep-alive only when asked for).
    let isHTTP10: Bool
    /// Upstream attempts made so far (a stale pooled connection gets one retry on a fresh one; the retry policy
    /// decides the others).
    var attempts: Int
}

/// The request side of an exchange.
enum RequestProgress: Equatable {
    /// Body bytes go to the upstream as they arrive (a bodyless request still owes the decoder's `.end`).
    case streaming
    /// Body bytes go to the spool; the request is signed and sent once it is complete.
    case spooling
    /// The whole request has been read.
    case complete
}

/// The response side of an exchange.
enum ResponseProgress: Equatable {
    /// The body is being spooled: no upstream yet.
    case awaitingSpool
    /// The signed head is on its way to the upstream (connecting, sent, or waiting for the first byte).
    case awaitingUpstream
    /// The upstream's answer is read whole before anything of it goes to the client, since `since`
    /// (milliseconds): an error the retry policy may retry, or the `200 OK` of an operation S3 may still fail in
    /// the body (`HeldAnswer`). It ends in a retry, in `streaming` (passed on), or, still incomplete
    /// `HeldAnswer.maxHoldMilliseconds` after `since`, passed on as far as it came (`tick`).
    case holding(since: Int)
    /// An attempt failed before anything of it reached the client; the next one starts when the backoff timer
    /// fires (issue 21 §3). No upstream connection meanwhile.
    case backingOff
    /// The upstream's head went to the client; its body streams in the given framing.
    case streaming(ClientBodyFraming)
    /// A cached answer's head went to the client; its slices are queued one by one as the client's output drains
    /// (`CachedBodySender`), until `cachedBodySent`. No upstream: `afterUpstream` when a revalidation's 304 let
    /// the answer go out (its exchange ends with the last slice), not when the cache answered alone.
    case sendingCached(afterUpstream: Bool)
    /// Waiting, since `since` (milliseconds), for another request's fill of the slices this one needs (issue 23
    /// §5). No upstream; woken when they are written or that fill ends, or after `maxCacheWaitMilliseconds`.
    case awaitingCache(since: Int)
    /// The response is complete (upstream or local) while the request is still being read.
    case complete
}

/// How a response body reaches the client.
enum ClientBodyFraming: Equatable {
    /// As the upstream framed it with a length (or no body at all): bytes pass through.
    case passThrough
    /// The upstream sent chunked or close-delimited; the client (HTTP/1.1) gets it re-chunked.
    case rechunked
    /// Close-delimited to an HTTP/1.0 client: the only sign of a complete body is an orderly close, so a
    /// body cut short must end with a reset instead (RFC 9112 §8, bug i).
    case untilClose
}

/// Why a connection will not carry another request.
enum CloseReason: Equatable {
    case clientAsked
    case requestBodyUnread
    case draining
    case clientHalfClosed
    case responseUntilClose
}

/// What the connection's read timer measures, derived from the state.
enum ClientReadTimeout: Equatable {
    case idle
    case header
    case body
    case none
}
