/// Refreshed upstream credentials in the Prometheus text format (issue 22 §2): per upstream and provider.
extension MetricsText {
    static func renderCredentials(_ metrics: [CredentialMetrics]) -> String {
        guard !metrics.isEmpty else { return "" }
        func labels(_ metric: CredentialMetrics) -> String {
            "{upstream=\(label(metric.upstream)),provider=\(label(metric.provider))}"
        }
        var out = "# HELP presignd_credentials_valid Whether the upstream has credentials that can sign now (0 or 1).\n"
        out += "# TYPE presignd_credentials_valid gauge\n"
        for metric in metrics { out += "presignd_credentials_valid\(labels(metric)) \(metric.isValid ? 1 : 0)\n" }
        out += "# HELP presignd_credentials_expiry_seconds Seconds until the current credentials expire.\n"
        out += "# TYPE presignd_credentials_expiry_seconds gauge\n"
        for metric in metrics {
            guard let seconds = metric.secondsToExpiry else { continue }
            out += "presignd_credentials_expiry_seconds\(labels(metric)) \(seconds)\n"
        }
        out += "# HELP presignd_credentials_refreshes_total Successful credential fetches.\n"
        out += "# TYPE presignd_credentials_refreshes_total counter\n"
        for metric in metrics { out += "presignd_credentials_refreshes_total\(labels(metric)) \(metric.refreshes)\n" }
        out += "# HELP presignd_credentials_refresh_failures_total Failed credential fetches.\n"
        out += "# TYPE presignd_credentials_refresh_failures_total counter\n"
        for metric in metrics {
            out += "presignd_credentials_refresh_failures_total\(labels(metric)) \(metric.failures)\n"
        }
        return out
    }
}
