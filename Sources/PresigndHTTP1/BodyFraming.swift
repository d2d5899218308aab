/// How the body of the current message is delimited (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Equatable {
    /// No body: a request without Content-Length or Transfer-Encoding, a response to HEAD, or a 1xx/204/304
    /// response (RFC 9112 §6.3 (1), (7)).
    case none
    /// Exactly this many body bytes follow the head (RFC 9112 §6.3 (6)). `0` is kept distinct from `.none` so a
    /// proxy can forward `Content-Length: 0`.
    case contentLength(Int)
    /// `Transfer-Encoding: chunked` (RFC 9112 §7.1).
    case chunked
    /// A response without Content-Length or Transfer-Encoding: the body runs until the connection closes
    /// (RFC 9112 §6.3 (8)). Never used for requests.
    case untilClose
}
