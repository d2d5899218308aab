import PresigndHTTP1

/// Reading `credential_source = "r2_temporary"` from an upstream table: the parent keys through the static
/// resolver, the lifetime, and the account and audience from the provider.
extension R2TemporaryCredentialConfig {
    /// Nil with errors reported (at `sourcePosition` when the provider cannot carry R2 temporary credentials).
    static func decode(
        reader: TableReader, context: RefreshingCredentialSource.DecodingContext, at sourcePosition: SourcePosition
    ) -> R2TemporaryCredentialConfig? {
        let diagnostics = reader.diagnostics
        let errorsBefore = diagnostics.errorCount
        let ttl = reader.duration(
            "r2_temporary_ttl", in: ConfigDuration.seconds(1)...ConfigDuration.seconds(maximumTTLSeconds))
        let parent = CredentialResolver(
            reader: reader, upstreamName: context.upstreamName, environment: context.environment,
            configPath: context.configPath
        ).resolve()
        if let parent, parent.sessionToken != nil {
            // Cloudflare mints from an API token's keys; a session token's secret cannot sign the JWT R2 accepts.
            diagnostics.error(
                "credential_source = \"r2_temporary\" mints from the parent R2 API token's long-lived keys; these "
                    + "keys carry a session token (\(parent.source))",
                at: reader.contains("session_token") ? reader.keyPosition("session_token") : sourcePosition)
        }
        var accountID: String?
        switch context.provider {
        case .r2?:
            accountID = context.endpoint.flatMap { $0.host.split(separator: ".").first.map(String.init) }
        case .custom?:
            // An R2-compatible endpoint reached at another address (a gateway, a local test server).
            if let account = reader.string("account_id") {
                accountID = ASCII.lowercased(account.value)
            } else if !reader.contains("account_id") {
                diagnostics.error(
                    "credential_source = \"r2_temporary\" on provider = \"custom\" needs account_id (the R2 "
                        + "account the parent keys belong to)", at: sourcePosition)
            }
        case .s3?:
            diagnostics.error(
                "credential_source = \"r2_temporary\" is for provider = \"r2\" (or \"custom\" with account_id, an "
                    + "R2-compatible endpoint)", at: sourcePosition)
        case nil:
            break
        }
        guard diagnostics.errorCount == errorsBefore, let parent, let accountID, let endpoint = context.endpoint
        else { return nil }
        var config = R2TemporaryCredentialConfig(parent: parent, accountID: accountID, audience: endpoint.hostHeader)
        if let ttl { config.ttlSeconds = ttl.seconds }
        return config
    }
}
