import PresigndHTTP1
import PresigndSigV4

/// Reading one `[upstream.NAME]`: provider rules, endpoint construction, TLS, timeouts and credentials.
extension UpstreamConfig {
    static let keys =
        [
            "provider", "account_id", "jurisdiction", "endpoint", "region", "ca_file", "verify_tls",
            "connect_timeout", "first_byte_timeout", "idle_timeout", "max_idle_connections", "aws_chunked",
            "max_put_size", "max_attempts", "retry_base_delay", "retry_max_delay",
        ] + CredentialResolver.keys + CredentialProcessConfig.keys + RefreshingCredentialSource.keys

    /// R2 jurisdictions and their endpoint host infix (`us`: Cloudflare's changelog of 2026-08-17).
    static let r2Jurisdictions = ["eu", "fedramp", "us"]

    /// Nil when the table has errors (reported to the reader's diagnostics).
    static func decode(
        name: String, reader: TableReader, environment: [String: String], configPath: String
    ) -> UpstreamConfig? {
        let diagnostics = reader.diagnostics
        let errorsBefore = diagnostics.errorCount
        defer { reader.reportUnknownKeys() }
        let provider = reader.choice("provider", as: Provider.self)
        if provider == nil && !reader.contains("provider") {
            diagnostics.error(
                "[upstream.\(name)] needs provider = \"r2\", \"s3\" or \"custom\"", at: reader.table.position)
        }
        let endpoint = decodeEndpoint(provider: provider, reader: reader)
        var region = reader.string("region")?.value ?? (provider == .r2 ? "auto" : "us-east-1")
        if let text = reader.string("region"), !isRegion(text.value) {
            diagnostics.error(
                "invalid region '\(text.value)'; expected e.g. \"us-east-1\" or \"auto\"", at: text.position)
            region = "us-east-1"
        }
        var refreshing: RefreshingCredentialSource? = nil
        let credentials: UpstreamCredentials?
        if reader.contains("r2_temporary_ttl") && !reader.contains("credential_source") {
            diagnostics.error(
                "r2_temporary_ttl is for credential_source = \"r2_temporary\"",
                at: reader.keyPosition("r2_temporary_ttl"))
        }
        if reader.contains("credential_source") {
            let context = RefreshingCredentialSource.DecodingContext(
                environment: environment, configPath: configPath, upstreamName: name,
                awsRegion: provider == .s3 ? region : nil, provider: provider, endpoint: endpoint)
            refreshing = RefreshingCredentialSource.decode(reader: reader, context: context)
            // Fetched by the daemon, never at load: check-config runs no process and makes no request.
            credentials = UpstreamCredentials(accessKeyID: "", secretAccessKey: Secret(""), source: "credential_source")
        } else if reader.contains("credential_process") {
            refreshing = CredentialProcessConfig.decode(
                reader: reader, configPath: configPath, environment: environment
            ).map(RefreshingCredentialSource.process)
            credentials = UpstreamCredentials(
                accessKeyID: "", secretAccessKey: Secret(""), source: "credential_process")
        } else if case let profiled = profileSource(
            reader: reader, environment: environment, configPath: configPath, awsRegion: provider == .s3 ? region : nil),
            profiled != .keys
        {
            // credentials_profile names a profile that assumes a role or runs a process (~/.aws/config).
            if case .refreshing(let source) = profiled { refreshing = source }
            credentials = UpstreamCredentials(
                accessKeyID: "", secretAccessKey: Secret(""), source: "credentials_profile")
        } else {
            if reader.contains("credential_process_timeout") {
                diagnostics.error(
                    "credential_process_timeout needs credential_process",
                    at: reader.keyPosition("credential_process_timeout"))
            }
            for key in RefreshingCredentialSource.roleKeys where reader.contains(key) {
                diagnostics.error(
                    "\(key) needs credential_source (\"assume_role\", \"web_identity\", …)",
                    at: reader.keyPosition(key))
            }
            credentials = CredentialResolver(
                reader: reader, upstreamName: name, environment: environment, configPath: configPath
            ).resolve()
        }
        guard let provider, let credentials,
            let endpoint = endpoint
                ?? (provider == .s3 ? Endpoint(scheme: .https, host: "s3.\(region).amazonaws.com") : nil)
        else { return nil }
        var upstream = UpstreamConfig(
            name: name, provider: provider, endpoint: endpoint, region: region, credentials: credentials)
        upstream.refreshingCredentials = refreshing
        if refreshing == nil { Placeholders.warn(upstream: name, credentials: credentials, reader: reader) }
        if endpoint.scheme == .http, let written = reader.value("endpoint") {
            diagnostics.warning(
                "endpoint of upstream '\(name)' uses http://: requests travel unencrypted (use only for local test "
                    + "servers)", at: written.position)
        }
        if let file = reader.string("ca_file") {
            let path = FileReader.resolve(file.value, relativeTo: configPath)
            if let problem = FileReader.readabilityProblem(path) {
                diagnostics.error("cannot read ca_file '\(file.value)': \(problem.reason)", at: file.position)
            }
            upstream.caFile = path
        }
        if let verify = reader.boolean("verify_tls") {
            upstream.verifyTLS = verify
            if !verify {
                diagnostics.warning(
                    "verify_tls = false: upstream '\(name)' certificates are not checked; anyone on the path can "
                        + "read and change traffic", at: reader.keyPosition("verify_tls"))
            }
        }
        let timeouts = ConfigDuration(milliseconds: 1)...ConfigDuration.days(1)
        if let value = reader.duration("connect_timeout", in: timeouts) { upstream.connectTimeout = value }
        if let value = reader.duration("first_byte_timeout", in: timeouts) { upstream.firstByteTimeout = value }
        if let value = reader.duration("idle_timeout", in: timeouts) { upstream.idleTimeout = value }
        if let value = reader.integer("max_idle_connections", in: 0...100_000) { upstream.maxIdleConnections = value }
        if let value = reader.choice("aws_chunked", as: AWSChunkedMode.self) { upstream.awsChunked = value }
        if let value = reader.size("max_put_size", in: ByteSize.mebibyte...Self.largestPutSize(provider)) {
            upstream.maxPutSize = value
        }
        if let value = reader.integer("max_attempts", in: 1...10) { upstream.maxAttempts = value }
        let delays = ConfigDuration(milliseconds: 1)...ConfigDuration.seconds(60)
        if let value = reader.duration("retry_base_delay", in: delays) { upstream.retryBaseDelay = value }
        if let value = reader.duration("retry_max_delay", in: delays) { upstream.retryMaxDelay = value }
        if upstream.retryBaseDelay > upstream.retryMaxDelay {
            diagnostics.error(
                "retry_base_delay (\(upstream.retryBaseDelay)) is longer than retry_max_delay (\(upstream.retryMaxDelay))",
                at: reader.keyPosition("retry_base_delay"))
        }
        return diagnostics.errorCount == errorsBefore ? upstream : nil
    }

    /// What `credentials_profile` configures when it is more than keys: `role_arn` (with `source_profile`,
    /// `credential_source` or `web_identity_token_file`) or `credential_process` in the shared files, as the AWS
    /// CLI reads them. Nil for a profile of plain keys (read as before, with its errors) or a table with inline keys.
    private enum ProfileSource: Equatable {
        /// Plain keys, or no profile: the static resolver reads them.
        case keys
        case refreshing(RefreshingCredentialSource)
        /// Reported to the diagnostics.
        case failed
    }

    private static func profileSource(
        reader: TableReader, environment: [String: String], configPath: String, awsRegion: String?
    ) -> ProfileSource {
        guard let profile = reader.string("credentials_profile"),
            !(["access_key_id", "access_key_id_file", "secret_access_key", "secret_access_key_file"].contains {
                reader.contains($0)
            })
        else { return .keys }
        let file = reader.string("credentials_file").map { FileReader.resolve($0.value, relativeTo: configPath) }
        let profiles = SharedProfiles.load(environment: environment, credentialsFile: file)
        let sts = STSEndpoint.fromEnvironment(environment, awsRegion: awsRegion, caFile: nil)
        switch profiles.resolve(profile.value, environment: environment, sts: sts, caFile: nil) {
        case .success(.staticKeys?), .success(nil):
            return .keys
        case .success(let source?):
            return .refreshing(source)
        case .failure(let error):
            reader.diagnostics.error("profile '\(profile.value)': \(error.reason)", at: profile.position)
            return .failed
        }
    }

    /// R2: from `account_id` and `jurisdiction` (an `endpoint` is an error: use `custom` for that). S3: `endpoint`
    /// or nil for the regional default. Custom: `endpoint`, required.
    private static func decodeEndpoint(provider: Provider?, reader: TableReader) -> Endpoint? {
        let diagnostics = reader.diagnostics
        let written = reader.string("endpoint")
        // An R2-compatible custom endpoint whose keys are minted R2 temporary credentials names its account.
        var mintsForAccount = false
        if provider == .custom, case .string("r2_temporary")? = reader.table["credential_source"]?.kind {
            mintsForAccount = true
            if let account = reader.string("account_id") { _ = accountID(account, diagnostics) }
        }
        if provider != .r2 {
            for key in ["account_id", "jurisdiction"]
            where reader.contains(key) && !(key == "account_id" && mintsForAccount) {
                diagnostics.error(
                    "\(key) is only for provider = \"r2\""
                        + (key == "account_id" && provider == .custom
                            ? " (or custom with credential_source = \"r2_temporary\")" : ""),
                    at: reader.keyPosition(key))
            }
        }
        switch provider {
        case .r2?:
            if reader.contains("endpoint") {
                diagnostics.error(
                    "endpoint is derived from account_id for provider = \"r2\"; use provider = \"custom\" to set it",
                    at: reader.keyPosition("endpoint"))
            }
            guard let account = reader.string("account_id") else {
                if !reader.contains("account_id") {
                    diagnostics.error("provider = \"r2\" needs account_id", at: reader.table.position)
                }
                return nil
            }
            guard let id = accountID(account, diagnostics) else { return nil }
            var host = "\(id).r2.cloudflarestorage.com"
            if let jurisdiction = reader.string("jurisdiction") {
                guard r2Jurisdictions.contains(jurisdiction.value) else {
                    diagnostics.error(
                        "invalid jurisdiction '\(jurisdiction.value)'; expected one of: \(r2Jurisdictions.joined(separator: ", "))",
                        at: jurisdiction.position)
                    return nil
                }
                host = "\(id).\(jurisdiction.value).r2.cloudflarestorage.com"
            }
            return Endpoint(scheme: .https, host: host)
        case .custom?:
            if written == nil && !reader.contains("endpoint") {
                diagnostics.error("provider = \"custom\" needs endpoint", at: reader.table.position)
            }
            fallthrough
        default:
            guard let written else { return nil }
            switch Endpoint.parse(written.value) {
            case .success(let endpoint):
                return endpoint
            case .failure(let error):
                diagnostics.error("invalid endpoint '\(written.value)': \(error.reason)", at: written.position)
                return nil
            }
        }
    }

    /// `account_id`, lower-cased; nil (reported) unless 32 hexadecimal characters.
    static func accountID(_ account: Located<String>, _ diagnostics: Diagnostics) -> String? {
        let id = ASCII.lowercased(account.value)
        // ASCII hex only: Character.isHexDigit also takes fullwidth digits.
        let isHex = id.utf8.allSatisfy { $0 &- UInt8(ascii: "0") < 10 || $0 &- UInt8(ascii: "a") < 6 }
        guard id.utf8.count == 32, isHex else {
            diagnostics.error("account_id must be 32 hexadecimal characters", at: account.position)
            return nil
        }
        return id
    }

    /// How high `max_put_size` may go: the provider's limit, or 5 TiB (MinIO's) for anything S3-compatible.
    private static func largestPutSize(_ provider: Provider) -> Int {
        provider == .custom ? 5 << 40 : provider.maxPutSize
    }

    private static func isRegion(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64
            && text.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
    }
}
