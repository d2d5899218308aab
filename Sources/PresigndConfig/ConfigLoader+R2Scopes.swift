/// The check across tables that `credential_source = "r2_temporary"` needs: an R2 temporary credential is scoped
/// to one bucket, so its upstream serves exactly one, and the key's scope comes from that bucket's policy.
extension ConfigLoader {
    /// Fills in each `r2_temporary` upstream's scope, or reports at its `credential_source` why none fits.
    static func deriveR2Scopes(
        _ upstreams: inout [String: UpstreamConfig], buckets: [BucketConfig], upstreamTable: TOMLTable?,
        diagnostics: Diagnostics
    ) {
        for name in upstreams.keys.sorted() {
            guard var upstream = upstreams[name], case .r2Temporary(var config)? = upstream.refreshingCredentials
            else { continue }
            var position = SourcePosition.start
            if case .table(let table)? = upstreamTable?[name]?.kind {
                position = table["credential_source"]?.position ?? table.position
            }
            let served = buckets.filter { $0.upstream == name }
            guard served.count == 1, let bucket = served.first else {
                diagnostics.error(
                    served.isEmpty
                        ? "credential_source = \"r2_temporary\" scopes the key to one bucket, but no [[bucket]] uses "
                            + "upstream '\(name)'"
                        : "credential_source = \"r2_temporary\" scopes the key to one bucket, but upstream '\(name)' "
                            + "serves \(served.count) (\(served.map(\.name).joined(separator: ", "))): define one "
                            + "upstream per bucket (same account_id and keys, another [upstream.NAME])",
                    at: position)
                continue
            }
            switch R2CredentialScope.derive(for: bucket) {
            case .success(let scope):
                config.scope = scope
                upstream.refreshingCredentials = .r2Temporary(config)
                upstreams[name] = upstream
            case .failure(let error):
                diagnostics.error("credential_source = \"r2_temporary\": \(error.message)", at: position)
            }
        }
    }
}
