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
    /// `max_connections`: client connections per worker; over it, a new connection is answered `503 SlowDown`
    /// and closed. Default nil: as many as the file-descriptor limit has room for (at most 16384).
    public var maxConnections: Int? = nil
    /// `max_upstream_connections`: connections per worker to each upstream. Default 256.
    public var maxUpstreamConnections: Int = 256

    /// `max_admin_connections`: open admin connections; more are closed at once. Default 32.
    public var maxAdminConnections: Int = 32
    /// `admin_request_timeout`: absolute deadline for an admin request's head and body (not restarted by a
    /// byte). Default 10 s.
    public var adminRequestTimeout: ConfigDuration = .seconds(10)
    /// `max_admin_body_size`: largest admin request body (the presign API's JSON). Default 64 KiB.
    public var maxAdminBodySize: Int = 64 * ByteSize.kibibyte
    /// `min_body_rate`: bytes per second a request or response body must average over `body_rate_window`;
    /// slower request bodies get 408, slower responses are cut. 0 turns the check off. Default 1 KiB/s.
    public var minBodyRate: Int = ByteSize.kibibyte
    /// `body_rate_window`: the window `min_body_rate` is averaged over. Default 30 s.
    public var bodyRateWindow: ConfigDuration = .seconds(30)

    public init() {}
}
