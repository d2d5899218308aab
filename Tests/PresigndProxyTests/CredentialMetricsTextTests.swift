import Testing

@testable import PresigndProxy

/// The credential metrics' Prometheus text.
@Suite struct CredentialMetricsTextTests {
    @Test func rendersValidityExpiryRefreshesAndFailuresPerUpstream() {
        let text = MetricsText.renderCredentials([
            CredentialMetrics(
                upstream: "aws", provider: "imds", refreshes: 3, failures: 1, isValid: true, secondsToExpiry: 840),
            CredentialMetrics(
                upstream: "r2", provider: "credential_process", refreshes: 0, failures: 5, isValid: false,
                secondsToExpiry: nil),
        ])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"presignd_credentials_valid{upstream="aws",provider="imds"} 1"#))
        #expect(lines.contains(#"presignd_credentials_valid{upstream="r2",provider="credential_process"} 0"#))
        #expect(lines.contains(#"presignd_credentials_expiry_seconds{upstream="aws",provider="imds"} 840"#))
        #expect(!text.contains(#"presignd_credentials_expiry_seconds{upstream="r2""#))
        #expect(lines.contains(#"presignd_credentials_refreshes_total{upstream="aws",provider="imds"} 3"#))
        #expect(
            lines.contains(
                #"presignd_credentials_refresh_failures_total{upstream="r2",provider="credential_process"} 5"#))
        #expect(lines.contains("# TYPE presignd_credentials_refresh_failures_total counter"))
    }

    @Test func nothingWithoutRefreshingUpstreams() {
        #expect(MetricsText.renderCredentials([]) == "")
    }
}
