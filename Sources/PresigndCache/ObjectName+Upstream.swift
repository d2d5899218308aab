import PresigndConfig

extension ObjectName {
    /// The name of `key` in `bucket` of `upstream`: the one way the connection and `presignd cache` name objects.
    /// The upstream part is its configured name and its endpoint (which carries the R2 account), so a reload that
    /// points an upstream elsewhere does not find the old storage's objects.
    public init(upstream: UpstreamConfig, bucket: String, key: String) {
        self.init(upstream: Self.upstreamIdentity(upstream), bucket: bucket, key: key)
    }

    public static func upstreamIdentity(_ upstream: UpstreamConfig) -> String {
        upstream.name + " " + upstream.endpoint.description
    }
}
