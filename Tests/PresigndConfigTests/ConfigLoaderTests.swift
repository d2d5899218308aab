import Foundation
import PresigndConfig
import PresigndTestSupport
import Testing

@Suite struct ConfigLoaderTests {
    @Test func reportsThreeMistakesOnDifferentLinesInOnePass() {
        let text = """
            [server]
            workers = "four"
            listen = ["127.0.0.1:8080"]

            [upstream.r2]
            provider = "r2"
            account_id = "0123456789abcdef0123456789abcdef"
            access_key_id = "AKIDEXAMPLE"
            secret_access_key = "wJalrXUtnFEMI"

            [[bucket]]
            name = "photos"
            upstream = "r2"
            acess = "read-only"
            max_presign_expiry = "8d"
            """
        let found = errors(text)
        #expect(
            found.map(\.description) == [
                "test.toml:2:11: error: 'workers': expected an integer, found a string",
                "test.toml:14:1: error: unknown key 'acess' in [[bucket]]; did you mean 'access'?",
                "test.toml:15:22: error: 'max_presign_expiry' must be from 1s to 7d",
            ])
    }

    @Test func syntaxAndValidationErrorsComeTogetherSortedWithoutCascades() {
        let text = """
            [server]
            log_level = "verbose"
            [[bucket]]
            name = "photos
            upstream = "r2"
            """
        #expect(
            described(errors(text)) == [
                "2:13: invalid log_level 'verbose'; expected one of: debug, info, warning, error",
                "4:8: unterminated string",
                "5:12: unknown upstream 'r2'; no [upstream.NAME] table is defined",
            ])
    }

    @Test(arguments: [
        ("[server]\nlisen = []", "2:1: unknown key 'lisen' in [server]; did you mean 'listen'?"),
        ("[server]\nlog = 1", "2:1: unknown key 'log' in [server]; did you mean 'log_level'?"),
        ("[server]\nzzz = 1", "2:1: unknown key 'zzz' in [server]"),
        ("[servr]", "1:2: unknown key 'servr' at the top level; did you mean 'server'?"),
        ("[server.limit]", "1:9: unknown key 'limit' in [server]; did you mean 'limits'?"),
        (
            "[upstream.s3]\nsecret_key = 1",
            "2:1: unknown key 'secret_key' in [upstream.s3]; did you mean 'secret_access_key'?"
        ),
    ])
    func suggestsTheClosestKnownKey(snippet: String, expected: String) {
        let found = described(errors(minimalUpstream + "\n" + snippet))
        let lineOffset = minimalUpstream.split(separator: "\n", omittingEmptySubsequences: false).count
        let shifted = expected.split(separator: ":", maxSplits: 1)
        let expectedLine = "\(Int(shifted[0])! + lineOffset):\(shifted[1])"
        #expect(found.contains(expectedLine), "\(found)")
    }

    @Test func loadsDefaults() throws {
        let configuration = try #require(loaded(minimalUpstream))
        let server = configuration.server
        #expect(server.listen == [.tcp(host: "127.0.0.1", port: 8080)])
        #expect(server.adminListen == .tcp(host: "127.0.0.1", port: 9180))
        #expect(server.unixSocketMode == 0o660 && server.workers == 0 && !server.allowRemote)
        #expect(server.limits.maxHeaderBytes == 65536 && server.limits.headerTimeout == .seconds(10))
        #expect(server.maxSpoolSize == nil && server.maxSpoolTotal == nil)
        #expect(server.logFormat == .logfmt && server.logLevel == .info)
        let bucket = try #require(configuration.buckets.first)
        #expect(bucket.mount == "/photos" && bucket.access == .readOnly && bucket.maxPresignExpiry == .days(7))
        #expect(bucket.redirectExpires == .minutes(5) && bucket.maxUploadSize == nil)
        #expect(configuration.upstreams["r2"]?.awsChunked == .auto)
        #expect(configuration.upstreams["r2"]?.forwardsAWSChunked == false)
    }

    @Test func readsEveryServerKey() throws {
        let text = """
            [server]
            listen = ["127.0.0.1:8081", "[::1]:8081", "unix:/run/presignd/p.sock"]
            admin_listen = ""
            workers = 2
            allowed_clients = ["10.0.0.0/8", "::1"]
            unix_socket_mode = "0600"
            shutdown_timeout = "1m"
            log_format = "json"
            max_spool_size = "1GiB"
            cors_allowed_origins = ["https://app.example.com", "*"]
            [server.limits]
            max_header_bytes = "32KiB"
            idle_timeout = 5
            """ + "\n" + minimalUpstream
        let server = try #require(loaded(text)).server
        #expect(server.listen.map(\.description) == ["127.0.0.1:8081", "[::1]:8081", "unix:/run/presignd/p.sock"])
        #expect(server.adminListen == nil && server.workers == 2 && server.unixSocketMode == 0o600)
        #expect(server.allowedClients.map(\.description) == ["10.0.0.0/8", "::1/128"])
        #expect(server.shutdownTimeout == .minutes(1) && server.logFormat == .json && server.maxSpoolSize == 1 << 30)
        #expect(server.limits.maxHeaderBytes == 32768 && server.limits.idleTimeout == .seconds(5))
        #expect(server.corsAllowedOrigins == ["https://app.example.com", "*"])
    }

    @Test func validatesBuckets() {
        let text =
            minimalUpstream + """

                mount = "/"
                [[bucket]]
                name = "photos"
                [[bucket]]
                name = "videos"
                mount = "/"
                [[bucket]]
                name = "docs"
                mount = "docs/"
                allowed_methods = ["GET", "PUT"]
                [[bucket]]
                name = "bad name"
                upstream = "r3"
                """
        #expect(
            described(errors(text)) == [
                "12:8: bucket 'photos' is already defined at line 7",
                "15:9: mount '/' is already used by bucket 'photos' at line 7",
                "18:9: invalid mount 'docs/': a mount must start with '/'",
                "19:27: method PUT is not allowed with access = \"read-only\"; set access = \"read-write\"",
                "21:8: invalid bucket name 'bad name'; expected 1 to 255 letters, digits, '.', '-' or '_'",
                "22:12: unknown upstream 'r3'; defined: r2; did you mean 'r2'?",
            ])
    }

    @Test func allowsACatchAllMountNextToOthersAndDefaultsTheOnlyUpstream() throws {
        let text =
            minimalUpstream + """

                mount = "/"
                access = "read-write"
                allowed_methods = ["get", "put"]
                [[bucket]]
                name = "videos"
                mount = "/media/videos"
                """
        let configuration = try #require(loaded(text))
        #expect(configuration.buckets.map(\.mount) == ["/", "/media/videos"])
        #expect(configuration.buckets[0].allowedMethods == ["GET", "PUT"])
        #expect(configuration.buckets[1].upstream == "r2")
    }

    @Test func requiresABucket() {
        let text = """
            [upstream.r2]
            provider = "r2"
            account_id = "0123456789abcdef0123456789abcdef"
            access_key_id = "AKIDEXAMPLE"
            secret_access_key = "wJalrXUtnFEMI"
            """
        #expect(
            described(errors(text)) == [
                "1:1: no [[bucket]] is defined; add at least one (name, upstream, mount, access)"
            ])
    }

    @Test(arguments: [
        ("[[bucket]]\nname = \"a\"", ["1:1: [[bucket]] needs an upstream, and no [upstream.NAME] table is defined"]),
        (
            minimalUpstream + "\n[upstream.b]\nprovider = \"s3\"\n[[bucket]]\nname = \"x\"",
            ["12:1: [[bucket]] needs upstream = one of: r2, b"]
        ),
        (
            "bucket = 1\n"
                + minimalUpstream.replacingOccurrences(of: "[[bucket]]\nname = \"photos\"\nupstream = \"r2\"", with: ""),
            ["1:10: 'bucket': expected an array of tables [[bucket]], found an integer"]
        ),
    ])
    func requiresEachBucketToReachAnUpstream(text: String, expected: [String]) {
        #expect(
            described(errors(text, environment: ["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "B"])) == expected)
    }

    @Test func reportsAnUnreadableFileWithoutAPosition() {
        guard case .failure(let failure) = ConfigLoader.load(path: "/nonexistent/presignd.toml", environment: [:])
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(
            failure.description
                == "/nonexistent/presignd.toml: error: cannot read configuration file: No such file or directory")
    }

    @Test func parsesTheExampleFiles() throws {
        let root = try #require(TestPaths.repositoryRoot())
        let example = ConfigLoader.load(path: root + "/config/presignd.example.toml", environment: [:])
        if case .failure(let errors) = example { Issue.record("example: \(errors)") }
        // The systemd configuration needs /run/credentials; on a dev box only those two reads may fail.
        if case .failure(let errors) = ConfigLoader.load(path: root + "/config/presignd.toml", environment: [:]) {
            #expect(errors.errors.allSatisfy { $0.message.hasPrefix("cannot read ") && $0.message.contains("_file") })
        }
    }

    @Test func exampleDocumentsEveryKey() throws {
        let root = try #require(TestPaths.repositoryRoot())
        let text = try String(contentsOfFile: root + "/config/presignd.example.toml", encoding: .utf8)
        let keys = [
            "listen", "admin_listen", "workers", "allow_remote", "allowed_clients", "unix_socket_mode",
            "unix_socket_owner", "unix_socket_group", "shutdown_timeout", "log_format", "log_level", "access_log",
            "spool_directory", "max_spool_size", "admin_token_file", "cors_allowed_origins", "max_request_line_bytes",
            "max_header_bytes", "max_header_count", "header_timeout", "idle_timeout", "body_idle_timeout",
            "max_connections", "max_upstream_connections", "max_admin_connections", "admin_request_timeout",
            "max_admin_body_size", "min_body_rate", "body_rate_window", "max_spool_total", "max_put_size", "provider",
            "account_id", "jurisdiction", "endpoint", "retry_budget", "retry_body_buffer", "max_attempts",
            "retry_base_delay", "retry_max_delay",
            "region", "ca_file", "verify_tls", "connect_timeout", "first_byte_timeout", "max_idle_connections",
            "aws_chunked", "access_key_id", "secret_access_key", "access_key_id_file", "secret_access_key_file",
            "session_token", "credentials_profile", "credentials_file", "name", "upstream", "mount", "access",
            "allowed_prefixes", "allowed_methods", "max_upload_size", "redirect", "redirect_expires",
            "max_presign_expiry", "plus_in_path_is_space", "allowed_actions", "denied_actions", "allow", "file",
            "credential_process", "credential_process_timeout", "credential_source", "admin_socket_mode",
            "admin_socket_owner", "admin_socket_group", "presign_api", "directory", "max_size", "slice_size",
            "max_object_size", "revalidate_after", "include_prefixes", "negative_ttl", "x_cache_header",
            "role_arn", "role_session_name",
            "external_id", "duration", "source", "web_identity_token_file", "sts_region", "sts_endpoint",
            "credentials_ca_file", "r2_temporary_ttl",
        ]
        for key in keys { #expect(text.contains("\(key) = "), "example lacks \(key)") }
    }
}
