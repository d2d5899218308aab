import PresigndConfig
import Testing

/// The process-wide limits' keys (issue 20): defaults, units, and `file:line:col` errors.
@Suite struct EdgeLimitsConfigTests {
    @Test func defaultsFollowTheLimitAndTheProvider() throws {
        let configuration = try #require(loaded(minimalUpstream))
        let limits = configuration.server.limits
        #expect(limits.maxConnections == nil)
        #expect(limits.maxAdminConnections == 32 && limits.adminRequestTimeout == .seconds(10))
        #expect(limits.maxAdminBodySize == 64 * 1024)
        #expect(limits.minBodyRate == 1024 && limits.bodyRateWindow == .seconds(30))
        #expect(configuration.server.maxSpoolSize == nil && configuration.server.maxSpoolTotal == nil)
        #expect(configuration.upstreams["r2"]?.maxPutSize == 5 * 1024 * 1024 * 1024 - 5 * 1024 * 1024)
        #expect(UpstreamConfig.Provider.s3.maxPutSize == 5 * 1024 * 1024 * 1024)
    }

    @Test func readsEveryLimitKey() throws {
        let text = """
            [server]
            max_spool_total = "2GiB"
            [server.limits]
            max_connections = 300
            max_admin_connections = 8
            admin_request_timeout = "3s"
            max_admin_body_size = "16KiB"
            min_body_rate = "10KiB/s"
            body_rate_window = "5s"

            """
            + minimalUpstream.replacingOccurrences(
                of: "secret_access_key = \"wJalrXUtnFEMI\"",
                with: "secret_access_key = \"wJalrXUtnFEMI\"\nmax_put_size = \"1GiB\"")
        let configuration = try #require(loaded(text))
        let limits = configuration.server.limits
        #expect(limits.maxConnections == 300 && limits.maxAdminConnections == 8)
        #expect(limits.adminRequestTimeout == .seconds(3) && limits.maxAdminBodySize == 16 * 1024)
        #expect(limits.minBodyRate == 10 * 1024 && limits.bodyRateWindow == .seconds(5))
        #expect(configuration.server.maxSpoolTotal == 2 << 30)
        #expect(configuration.upstreams["r2"]?.maxPutSize == 1 << 30)
    }

    @Test func acceptsARateAsBytesPerSecondOrZero() throws {
        let plain = try #require(loaded("[server.limits]\nmin_body_rate = 500\n" + minimalUpstream))
        #expect(plain.server.limits.minBodyRate == 500)
        let off = try #require(loaded("[server.limits]\nmin_body_rate = \"0B/s\"\n" + minimalUpstream))
        #expect(off.server.limits.minBodyRate == 0)
    }

    @Test func reportsBadValuesWithTheirPosition() {
        let text = """
            [server]
            max_spool_total = "1KiB"
            [server.limits]
            min_body_rate = "1KiB"
            body_rate_window = "0s"
            max_admin_connections = 0

            """
            + minimalUpstream.replacingOccurrences(
                of: "secret_access_key = \"wJalrXUtnFEMI\"",
                with: "secret_access_key = \"wJalrXUtnFEMI\"\nmax_put_size = \"6GiB\"")
        #expect(
            described(errors(text)) == [
                "2:19: 'max_spool_total' must be from 1MiB to 1024TiB",
                "4:17: 'min_body_rate': invalid rate '1KiB'; use a size per second (B, KiB, MiB, KB, MB), e.g. "
                    + "\"1KiB/s\"",
                "5:20: 'body_rate_window' must be from 1s to 1h",
                "6:25: 'max_admin_connections' must be from 1 to 100000",
                "12:16: 'max_put_size' must be from 1MiB to 5115MiB",
            ])
    }
}
