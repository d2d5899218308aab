/// One `[upstream.NAME]` table: where signed requests go and with which keys. Requests are path-style
/// (`https://endpoint/bucket/key`).
public struct UpstreamConfig: Sendable, Hashable {
    /// `provider`: decides the default endpoint and region.
    public enum Provider: String, Sendable, Hashable, CaseIterable {
        /// Cloudflare R2: endpoint from `account_id` (and `jurisdiction`), region `auto`.
        case r2
        /// AWS S3: endpoint `https://s3.REGION.amazonaws.com` unless `endpoint` is set.
        case s3
        /// Anything S3-compatible (MinIO, Ceph, test servers): `endpoint` required.
        case custom
    }

    /// `aws_chunked`: what to do with client bodies in `aws-chunked` encoding.
    public enum AWSChunkedMode: String, Sendable, Hashable, CaseIterable {
        /// `unwrap` for R2 (which rejects streaming payloads), `forward` otherwise.
        case auto
        /// Pass the encoding through, re-signed.
        case forward
        /// Decode the chunks and send a plain body.
        case unwrap
    }

    /// The table name: `NAME` in `[upstream.NAME]`.
    public var name: String
    public var provider: Provider
    /// Built from `account_id`/`jurisdiction` for R2, from `region` for S3, from `endpoint` otherwise.
    public var endpoint: Endpoint
    /// `region`: `auto` for R2, default `us-east-1` for S3 and custom.
    public var region: String
    /// `ca_file`: PEM bundle to verify the upstream with instead of the system store.
    public var caFile: String? = nil
    /// `verify_tls`: verify the certificate and host name. Default true; false only with a loud warning.
    public var verifyTLS: Bool = true
    /// The keys, resolved at load; for a `credential_process` upstream a placeholder (`source`
    /// `"credential_process"`, empty keys) until the daemon fetches them.
    public var credentials: UpstreamCredentials
    /// `credential_process` or `credential_source`: credentials the daemon fetches and refreshes (nil: static keys).
    public var refreshingCredentials: RefreshingCredentialSource? = nil

    /// The `credential_process`, when that is the source.
    public var credentialProcess: CredentialProcessConfig? {
        if case .process(let config)? = refreshingCredentials { return config }
        return nil
    }
    /// `connect_timeout`: TCP and TLS handshake. Default 5 s.
    public var connectTimeout: ConfigDuration = .seconds(5)
    /// `first_byte_timeout`: from the request sent to the response head. Default 60 s.
    public var firstByteTimeout: ConfigDuration = .seconds(60)
    /// `idle_timeout`: how long a pooled keep-alive connection is kept. Default 60 s.
    public var idleTimeout: ConfigDuration = .seconds(60)
    /// `max_idle_connections`: pooled idle connections per worker. Default 128 (at least the number of
    /// concurrent requests expected, or connections are opened and closed per request).
    public var maxIdleConnections: Int = 128
    /// `aws_chunked`. Default auto.
    public var awsChunked: AWSChunkedMode = .auto
    /// `max_put_size`: the largest body one PUT (object or part) may carry upstream; a request declaring more is
    /// refused with `EntityTooLarge` before its body is read. Default the provider's limit (`Provider.maxPutSize`).
    public var maxPutSize: Int
    /// `max_attempts`: attempts per request, the first included, for requests that can be sent again (issue 21).
    /// Default 3; 1 turns retries off for this upstream.
    public var maxAttempts: Int = 3
    /// `retry_base_delay`: the backoff before the first retry is drawn from 0 to this, doubling for each further
    /// retry (full jitter). Default 100 ms.
    public var retryBaseDelay = ConfigDuration(milliseconds: 100)
    /// `retry_max_delay`: the longest wait before a retry, and the longest `Retry-After` honoured. Default 5 s.
    public var retryMaxDelay: ConfigDuration = .seconds(5)

    public init(name: String, provider: Provider, endpoint: Endpoint, region: String, credentials: UpstreamCredentials)
    {
        self.name = name
        self.provider = provider
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.maxPutSize = provider.maxPutSize
    }

    /// Whether `aws-chunked` client bodies are forwarded as-is (after resolving `auto`).
    public var forwardsAWSChunked: Bool {
        switch awsChunked {
        case .auto: provider != .r2
        case .forward: true
        case .unwrap: false
        }
    }
}

extension UpstreamConfig.Provider {
    /// The largest single PUT (object or multipart part) the provider takes: R2 5 GiB − 5 MiB, S3 5 GiB
    /// (and 5 GiB for anything else S3-compatible).
    public var maxPutSize: Int {
        switch self {
        case .r2: 5 * ByteSize.gibibyte - 5 * ByteSize.mebibyte
        case .s3, .custom: 5 * ByteSize.gibibyte
        }
    }
}
