import PresigndSigV4

/// A loaded, validated presignd configuration: immutable and `Sendable`, shared by every worker thread.
public struct Configuration: Sendable, Hashable {
    /// `[server]`.
    public var server: ServerConfig
    /// `[upstream.NAME]` tables by name.
    public var upstreams: [String: UpstreamConfig]
    /// `[[bucket]]` tables in file order.
    public var buckets: [BucketConfig]
    /// `[token.NAME]`: bearer tokens that name a principal (`allow = ["token:NAME"]`), read from their files.
    public var tokens: [String: Secret] = [:]
    /// The file the configuration came from.
    public var sourcePath: String
    /// Things worth logging that do not stop the load (TLS verification off, `http://` endpoints, remote
    /// listeners), in file order.
    public var warnings: [ConfigError]

    public init(
        server: ServerConfig, upstreams: [String: UpstreamConfig], buckets: [BucketConfig], sourcePath: String,
        warnings: [ConfigError] = []
    ) {
        self.server = server
        self.upstreams = upstreams
        self.buckets = buckets
        self.sourcePath = sourcePath
        self.warnings = warnings
    }

    /// Upstream names, sorted, for stable output.
    public var upstreamNames: [String] { upstreams.keys.sorted() }
}
