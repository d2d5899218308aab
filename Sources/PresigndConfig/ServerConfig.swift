/// The `[server]` table: listeners, access control, limits and logging. Every key is optional.
public struct ServerConfig: Sendable, Hashable {
    /// `log_format`.
    public enum LogFormat: String, Sendable, Hashable, CaseIterable {
        case logfmt
        case json
    }

    /// `presign_api`: `token` requires `admin_token_file`'s bearer token; `open` serves whoever reaches the admin
    /// listener (a TCP one only from loopback peers under a loopback Host); `off` refuses every presign request.
    public enum PresignAPIAccess: String, Sendable, Hashable, CaseIterable {
        case token, open, off
    }

    /// `log_level`: the least severe level logged.
    public enum LogLevel: String, Sendable, Hashable, CaseIterable {
        case debug, info, warning, error
    }

    /// `listen`: one address or an array. Default `["127.0.0.1:8080"]`. Non-loopback TCP needs `allowRemote`.
    public var listen: [ListenAddress] = [.tcp(host: "127.0.0.1", port: 8080)]
    /// `admin_listen`: `/healthz`, `/readyz`, `/metrics`, presign API. Default `127.0.0.1:9180`; `""` turns it off.
    public var adminListen: ListenAddress? = .tcp(host: "127.0.0.1", port: 9180)
    /// `workers`: event-loop threads; 0 (default) means one per core.
    public var workers: Int = 0
    /// `allow_remote`: permits non-loopback listen addresses. Default false: whoever reaches presignd uses its keys.
    public var allowRemote: Bool = false
    /// `allowed_clients`: client address ranges accepted; empty (default) accepts whoever can connect.
    public var allowedClients: [CIDR] = []
    /// `unix_socket_mode`: permission bits of unix socket listeners, written as a string `"0660"` (default).
    public var unixSocketMode: UInt32 = 0o660
    /// `unix_socket_owner`: the user (name or number) unix socket listeners are chowned to; nil keeps the process
    /// user.
    public var unixSocketOwner: UInt32? = nil
    /// `unix_socket_group`: the group (name or number) unix socket listeners are chowned to; nil keeps the process
    /// group.
    public var unixSocketGroup: UInt32? = nil
    /// `admin_socket_mode`, `admin_socket_owner`, `admin_socket_group`: the same for a unix `admin_listen`; each
    /// defaults to its `unix_socket_*` value (issue 19 §6).
    public var adminSocketMode: UInt32? = nil
    public var adminSocketOwner: UInt32? = nil
    public var adminSocketGroup: UInt32? = nil
    /// `presign_api`: who may use the presign API on the admin listener; nil decides by `admin_token_file` and the
    /// kind of `admin_listen` (see `presignAPIAccess`).
    public var presignAPI: PresignAPIAccess? = nil
    /// `[server.limits]`.
    public var limits = Limits()
    /// `shutdown_timeout`: how long SIGTERM waits for in-flight requests. Default 30 s.
    public var shutdownTimeout: ConfigDuration = .seconds(30)
    /// `log_format`. Default logfmt.
    public var logFormat: LogFormat = .logfmt
    /// `log_level`. Default info.
    public var logLevel: LogLevel = .info
    /// `access_log`: one line per request. Default true.
    public var accessLog: Bool = true
    /// `spool_directory`: where bodies that must be buffered (e.g. aws-chunked unwrapping without a decoded
    /// length) are spooled. Default `/var/tmp`.
    public var spoolDirectory: String = "/var/tmp"
    /// `max_spool_size`: largest body spooled to disk. Default nil: the upstream's largest single PUT
    /// (`UpstreamConfig.maxPutSize`).
    public var maxSpoolSize: Int? = nil
    /// `max_spool_total`: bytes all spooled uploads together may hold. Default nil: half the spool directory's free
    /// space when presignd starts, at most 64 GiB (`check-config` shows the figure).
    public var maxSpoolTotal: Int? = nil
    /// `admin_token_file`: file holding the bearer token the admin presign API requires; nil leaves it open to
    /// whoever reaches `admin_listen`.
    public var adminTokenFile: String? = nil
    /// `cors_allowed_origins`: origins (`"https://app.example"` or `"*"`) answered with CORS headers. Default none.
    public var corsAllowedOrigins: [String] = []
    /// `retry_budget`: retries one worker may make in a row while every request fails (a token bucket that
    /// requests succeeding refill; issue 21). Default 100; 0 turns retries off.
    public var retryBudget: Int = 100
    /// `retry_body_buffer`: a streamed request body up to this size is kept in memory so it can be sent again;
    /// larger streamed bodies are not retried once a byte has left. Default 64 KiB; 0 keeps none.
    public var retryBodyBuffer: Int = 64 * 1024

    public init() {}

    /// The presign API's access as it runs: `presign_api` when set; otherwise `token` with `admin_token_file`, `open`
    /// on a unix admin socket (its mode and owner decide who connects), and `off` on TCP, where any local user
    /// could connect (issue 19 §6: a TCP admin listener needs a token unless the config opens it).
    public var presignAPIAccess: PresignAPIAccess {
        if let presignAPI { return presignAPI }
        if adminTokenFile != nil { return .token }
        if case .unix? = adminListen { return .open }
        return .off
    }

    /// One line for `check-config` and the startup log: the presign API's access and, when it is off by default,
    /// what to write to open it (earlier versions served a tokenless TCP presign API to loopback peers).
    public var presignAPISummary: String? {
        guard adminListen != nil else { return nil }
        switch presignAPIAccess {
        case .token: return "presign API: bearer token from admin_token_file"
        case .open: return "presign API: open to whoever reaches admin_listen" + (isAdminTCP ? " from loopback" : "")
        case .off where presignAPI == nil:
            return "presign API: off (a TCP admin_listen without admin_token_file would let any local user mint "
                + "links); set admin_token_file, or presign_api = \"open\" for loopback clients without a token"
        case .off: return "presign API: off"
        }
    }

    private var isAdminTCP: Bool {
        if case .tcp? = adminListen { return true }
        return false
    }
}
