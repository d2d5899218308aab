import PresigndConfig
import Testing

@Suite struct UpstreamTests {
    private let keys = "access_key_id = \"AKIDEXAMPLE\"\nsecret_access_key = \"wJalrXUtnFEMI\"\n"
    private let bucket = "\n[[bucket]]\nname = \"photos\"\n"

    private func upstream(_ body: String) -> UpstreamConfig? {
        loaded("[upstream.u]\n" + body + "\n" + keys + bucket)?.upstreams["u"]
    }

    @Test(arguments: [
        ("", "0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com"),
        ("jurisdiction = \"eu\"", "0123456789abcdef0123456789abcdef.eu.r2.cloudflarestorage.com"),
        ("jurisdiction = \"fedramp\"", "0123456789abcdef0123456789abcdef.fedramp.r2.cloudflarestorage.com"),
        ("jurisdiction = \"us\"", "0123456789abcdef0123456789abcdef.us.r2.cloudflarestorage.com"),
    ])
    func buildsR2EndpointsFromAccountAndJurisdiction(extra: String, host: String) throws {
        let r2 = try #require(
            upstream("provider = \"r2\"\naccount_id = \"0123456789ABCDEF0123456789abcdef\"\n" + extra))
        #expect(r2.endpoint.description == "https://" + host)
        #expect(r2.endpoint.hostHeader == host && r2.endpoint.port == 443)
        #expect(r2.region == "auto" && r2.provider == .r2 && !r2.forwardsAWSChunked)
    }

    @Test func defaultsS3EndpointFromRegion() throws {
        let s3 = try #require(upstream("provider = \"s3\"\nregion = \"eu-west-1\""))
        #expect(s3.endpoint.description == "https://s3.eu-west-1.amazonaws.com")
        let east = try #require(upstream("provider = \"s3\""))
        #expect(east.region == "us-east-1" && east.endpoint.host == "s3.us-east-1.amazonaws.com")
        #expect(east.forwardsAWSChunked)
    }

    @Test func acceptsCustomHTTPEndpointsWithAWarning() throws {
        let text = "[upstream.u]\nprovider = \"custom\"\nendpoint = \"http://127.0.0.1:9000\"\n" + keys + bucket
        let configuration = try #require(loaded(text))
        let minio = try #require(configuration.upstreams["u"])
        #expect(minio.endpoint.hostHeader == "127.0.0.1:9000" && minio.region == "us-east-1")
        #expect(described(configuration.warnings).count == 1)
        #expect(configuration.warnings.first?.line == 3)
    }

    @Test func readsTimeoutsAndTLSSettings() throws {
        let custom = try #require(
            upstream(
                """
                provider = "custom"
                endpoint = "https://minio.internal:9000"
                connect_timeout = "250ms"
                first_byte_timeout = "2m"
                idle_timeout = 10
                max_idle_connections = 4
                aws_chunked = "unwrap"
                verify_tls = false
                """))
        #expect(custom.connectTimeout == ConfigDuration(milliseconds: 250) && custom.firstByteTimeout == .minutes(2))
        #expect(custom.idleTimeout == .seconds(10) && custom.maxIdleConnections == 4 && custom.awsChunked == .unwrap)
        #expect(!custom.verifyTLS)
    }

    @Test func readsRetrySettings() throws {
        let defaults = try #require(upstream("provider = \"s3\""))
        #expect(defaults.maxAttempts == 3 && defaults.retryBaseDelay == ConfigDuration(milliseconds: 100))
        #expect(defaults.retryMaxDelay == .seconds(5))
        let custom = try #require(
            upstream("provider = \"s3\"\nmax_attempts = 1\nretry_base_delay = \"1s\"\nretry_max_delay = \"20s\""))
        #expect(custom.maxAttempts == 1 && custom.retryBaseDelay == .seconds(1) && custom.retryMaxDelay == .seconds(20))
    }

    @Test(arguments: [
        ("provider = \"r2\"\naccount_id = \"abc\"", "3:14: account_id must be 32 hexadecimal characters"),
        // Character.isHexDigit also takes fullwidth digits (3 bytes each: 29 + 3 made 32 bytes).
        (
            "provider = \"r2\"\naccount_id = \"0123456789abcdef0123456789abc\u{FF10}\"",
            "3:14: account_id must be 32 hexadecimal characters"
        ),
        ("provider = \"r2\"", "1:1: provider = \"r2\" needs account_id"),
        (
            "provider = \"r2\"\naccount_id = \"0123456789abcdef0123456789abcdef\"\nendpoint = \"https://x\"",
            "4:1: endpoint is derived from account_id for provider = \"r2\"; use provider = \"custom\" to set it"
        ),
        (
            "provider = \"r2\"\naccount_id = \"0123456789abcdef0123456789abcdef\"\njurisdiction = \"apac\"",
            "4:16: invalid jurisdiction 'apac'; expected one of: eu, fedramp, us"
        ),
        ("provider = \"s3\"\njurisdiction = \"eu\"", "3:1: jurisdiction is only for provider = \"r2\""),
        ("provider = \"custom\"", "1:1: provider = \"custom\" needs endpoint"),
        (
            "provider = \"custom\"\nendpoint = \"minio:9000\"",
            "3:12: invalid endpoint 'minio:9000': endpoint must start with https:// (or http:// for a local test server)"
        ),
        ("provider = \"gcs\"", "2:12: invalid provider 'gcs'; expected one of: r2, s3, custom"),
        ("provider = \"R2\"", "2:12: invalid provider 'R2'; expected one of: r2, s3, custom; did you mean 'r2'?"),
        ("", "1:1: [upstream.u] needs provider = \"r2\", \"s3\" or \"custom\""),
        ("provider = \"s3\"\nregion = \"EU\"", "3:10: invalid region 'EU'; expected e.g. \"us-east-1\" or \"auto\""),
        (
            "provider = \"s3\"\naws_chunked = \"maybe\"",
            "3:15: invalid aws_chunked 'maybe'; expected one of: auto, forward, unwrap"
        ),
        (
            "provider = \"s3\"\nretry_base_delay = \"10s\"\nretry_max_delay = \"1s\"",
            "3:1: retry_base_delay (10s) is longer than retry_max_delay (1s)"
        ),
        (
            "provider = \"s3\"\nca_file = \"/nonexistent/ca.pem\"",
            "3:11: cannot read ca_file '/nonexistent/ca.pem': No such file or directory"
        ),
    ])
    func reportsUpstreamMistakes(body: String, expected: String) {
        let found = described(errors("[upstream.u]\n" + body + "\n" + keys + bucket))
        #expect(found == [expected])
    }
}
