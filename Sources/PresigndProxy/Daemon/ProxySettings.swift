import PresigndConfig
import PresigndIO
import PresigndSigV4

/// An upstream as the proxy reaches it: resolved endpoint, TLS, credentials and timeouts.
struct UpstreamTarget: Sendable {
    var name: String
    var usesTLS: Bool
    /// Host name or IP literal without brackets, as connected to and verified.
    var host: String
    var port: Int
    /// `Host` header value: lower case, default port omitted, IPv6 bracketed (SigV4 §4.2).
    var hostHeader: String
    var region: String
    var credentials: Credentials
    var tls: TLSClientContext?
    var connectTimeoutMilliseconds: Int = 5_000
    var firstByteTimeoutMilliseconds: Int = 60_000
    var idleTimeoutMilliseconds: Int = 60_000
    var maxIdleConnections: Int = 128
    /// Client `aws-chunked` bodies go upstream as they are (AWS S3) instead of being unwrapped
    /// into plain bodies (R2 rejects streaming payloads; SIGV4-S3-RULES §5.3).
    var forwardsAWSChunked: Bool = false
    /// The largest body one PUT may carry to this upstream (`max_put_size`, the provider's limit by default).
    var maxPutSize: Int = 5 << 30
    /// The credentials are fetched and refreshed (`credential_process`): workers sign with what the daemon's
    /// `CredentialRefresher` last published, not with `credentials`.
    var refreshesCredentials: Bool = false
    /// `max_attempts`, `retry_base_delay`, `retry_max_delay` (issue 21 §3).
    var retry = RetryPolicy()
    /// Cloudflare R2 (`provider = "r2"`): its `cf-*` extensions are forwarded, its unimplemented S3 features are
    /// answered locally (issue 21 §5).
    var isR2: Bool = false
    /// `ObjectName.upstreamIdentity`: the upstream part of a cached object's name (configured name and endpoint).
    var objectNamespace: String = ""
}

/// Client-side limits and timeouts.
struct ClientLimits: Sendable {
    var maxRequestLineBytes = 8 * 1024
    var maxHeaderBytes = 64 * 1024
    var maxHeaderCount = 100
    var headerTimeoutMilliseconds = 10_000
    var idleTimeoutMilliseconds = 60_000
    var bodyIdleTimeoutMilliseconds = 60_000
    var maxConnectionsPerWorker = 1024
    /// The admin listener's connection cap, its absolute deadline per request, its body cap.
    var maxAdminConnections = 32
    var adminRequestTimeoutMilliseconds = 10_000
    var maxAdminBodyBytes = 64 * 1024
    /// Bytes per second a body must average over the window; 0: no check (`min_body_rate`).
    var minBodyRate = 1024
    var bodyRateWindowMilliseconds = 30_000
}

/// Everything a worker needs to serve, immutable and shared; a reload swaps in a new one.
final class ProxySettings: Sendable {
    let upstreams: [UpstreamTarget]
    let router: Router
    let limits: ClientLimits
    let accessLog: Bool
    /// Output-buffer high watermark: past it, the other side stops reading (DESIGN §2).
    let highWatermark: Int
    let lowWatermark: Int
    /// Client networks allowed to connect; empty allows every client that can reach the listener.
    let allowedClients: [CIDR]
    /// Where length-less and unwrapped uploads are spooled (files are unlinked at once).
    let spoolDirectory: String
    /// nil: the upstream's `maxPutSize`.
    let maxSpoolSize: Int?
    /// The admin listener's presign API: bearer token file and CORS origins (issue 7).
    let adminAPI: AdminAPISettings
    /// `[token.NAME]`: bearer tokens that name principals, as bytes for the constant-time comparison.
    let tokens: [(name: String, secret: [UInt8])]
    /// `retry_budget`: retries a worker may make in a row while every request fails (`RetryBudget`).
    let retryBudget: Int
    /// `retry_body_buffer`: streamed bodies up to this size are kept so they can be sent again.
    let retryBodyBuffer: Int
    /// The open cache stores by directory (issue 23); a bucket's `[bucket.cache]` names its directory.
    let caches: CacheStoreMap

    init(
        upstreams: [UpstreamTarget], routes: [BucketRoute], limits: ClientLimits, accessLog: Bool = true,
        allowedClients: [CIDR] = [], spoolDirectory: String = "/var/tmp", maxSpoolSize: Int? = nil,
        adminAPI: AdminAPISettings = AdminAPISettings(), tokens: [(name: String, secret: [UInt8])] = [],
        highWatermark: Int = 512 * 1024, lowWatermark: Int = 128 * 1024, retryBudget: Int = 100,
        retryBodyBuffer: Int = 64 * 1024, caches: CacheStoreMap = CacheStoreMap()
    ) {
        self.caches = caches
        self.retryBudget = retryBudget
        self.retryBodyBuffer = retryBodyBuffer
        self.adminAPI = adminAPI
        self.tokens = tokens
        self.upstreams = upstreams
        self.router = Router(routes: routes)
        self.limits = limits
        self.accessLog = accessLog
        self.allowedClients = allowedClients
        self.spoolDirectory = spoolDirectory
        self.maxSpoolSize = maxSpoolSize
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
    }
}

extension ProxySettings {
    /// The same settings with the daemon's open cache stores (opened after the plan is made, before it runs).
    func with(caches: CacheStoreMap) -> ProxySettings {
        ProxySettings(
            upstreams: upstreams, routes: router.routes, limits: limits, accessLog: accessLog,
            allowedClients: allowedClients, spoolDirectory: spoolDirectory, maxSpoolSize: maxSpoolSize,
            adminAPI: adminAPI, tokens: tokens, highWatermark: highWatermark, lowWatermark: lowWatermark,
            retryBudget: retryBudget, retryBodyBuffer: retryBodyBuffer, caches: caches)
    }

    /// The name of the `[token.NAME]` whose token was presented, or nil. Every token is compared, so the time
    /// taken does not say which one came close.
    func tokenName(presented: String) -> String? {
        var found: String? = nil
        let bytes = Array(presented.utf8)
        for token in tokens where BearerToken.constantTimeEquals(bytes, token.secret) { found = token.name }
        return found
    }

    /// `allowed_clients` check at accept (DESIGN §6); unix-socket peers are governed by file mode.
    func admits(_ peer: SocketAddress) -> Bool {
        guard !allowedClients.isEmpty, !peer.bytes.isEmpty else { return true }
        guard let address = IPAddress(peer.host) else { return false }
        return allowedClients.contains { $0.contains(address) }
    }
}
