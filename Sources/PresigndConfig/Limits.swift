/// Bounds on what one client can hold (DESIGN §6). Keys live in `[server.limits]`.
public struct Limits: Sendable, Hashable {
    /// `max_request_line_bytes`: longest request line (method, target, version); longer gets 414. Default 8 KiB.
    public var maxRequestLineBytes: Int = 8 * ByteSize.kibibyte
    /// `max_header_bytes`: total size of a request head; larger gets 431. Default 64 KiB.
    public var maxHeaderBytes: Int = 64 * ByteSize.kibibyte
    /// `max_header_count`: header fields per request; more gets 431. Default 100.
    public var maxHeaderCount: Int = 100
    /// `header_timeout`: time to receive a whole request head. Default 10 s.
    public var headerTimeout: ConfigDuration = .seconds(10)
    /// `idle_timeout`: how long a keep-alive client connection may sit between requests. Default 60 s.
    public var idleTimeout: ConfigDuration = .seconds(60)
    /// `body_idle_timeout`: longest pause while a request or response body is moving. Default 60 s.
    public var bodyIdleTimeout: ConfigDuration = .seconds(60)
    /// `max_connections`: client connections per worker; further connections wait in the backlog. Default 1024.
    public var maxConnections: Int = 1024
    /// `max_upstream_connections`: connections per worker to each upstream. Default 256.
    public var maxUpstreamConnections: Int = 256

    public init() {}
}
