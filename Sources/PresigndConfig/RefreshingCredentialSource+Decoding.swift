import PresigndSigV4

/// Reading `credential_source` and the keys that go with it from an upstream table.
extension RefreshingCredentialSource {
    static let keys = ["credential_source", "r2_temporary_ttl"] + roleKeys
    /// The keys of `assume_role` and `web_identity` (and `credentials_ca_file`, also for an https container URI).
    static let roleKeys = [
        "role_arn", "role_session_name", "external_id", "duration", "source", "web_identity_token_file",
        "sts_endpoint", "sts_region", "credentials_ca_file",
    ]
    static let kinds = ["container", "imds", "assume_role", "web_identity", "chain", "r2_temporary"]
    /// `source` of an assumed role: `keys` is the table's own keys (inline, files, `credentials_profile` or the
    /// `AWS_*` environment, as for static upstreams).
    static let roleSources = ["keys", "credential_process", "container", "imds", "web_identity", "chain"]

    /// What the loader knows besides the table.
    struct DecodingContext {
        var environment: [String: String]
        var configPath: String
        var upstreamName: String
        /// The upstream's region when it is an AWS one (provider `s3`), the STS region's default.
        var awsRegion: String?
        /// The upstream's provider and endpoint (nil when wrong, already reported), for `r2_temporary`.
        var provider: UpstreamConfig.Provider? = nil
        var endpoint: Endpoint? = nil
    }

    /// `credential_source = "…"`; nil with errors reported when a key is wrong, is combined with keys of another
    /// source, or the environment lacks what the source needs.
    static func decode(reader: TableReader, context: DecodingContext) -> RefreshingCredentialSource? {
        let diagnostics = reader.diagnostics
        guard let source = reader.string("credential_source") else { return nil }
        guard kinds.contains(source.value) else {
            diagnostics.error(
                "invalid credential_source '\(source.value)'; expected one of: "
                    + kinds.map { "\"\($0)\"" }.joined(separator: ", "), at: source.position)
            return nil
        }
        let roleSource = reader.string("source")
        let usesRoleKeys = ["assume_role", "web_identity"].contains(source.value)
        // credentials_ca_file also verifies an https container URI, and the chain's STS and container calls.
        for key in roleKeys where reader.contains(key) && !usesRoleKeys && key != "credentials_ca_file" {
            diagnostics.error(
                "\(key) is for credential_source = \"assume_role\" or \"web_identity\"", at: reader.keyPosition(key))
            return nil
        }
        if source.value != "r2_temporary", reader.contains("r2_temporary_ttl") {
            diagnostics.error(
                "r2_temporary_ttl is for credential_source = \"r2_temporary\"",
                at: reader.keyPosition("r2_temporary_ttl"))
            return nil
        }
        if source.value != "assume_role", let roleSource {
            diagnostics.error("source is for credential_source = \"assume_role\"", at: roleSource.position)
            return nil
        }
        if source.value == "web_identity", reader.contains("external_id") {
            diagnostics.error(
                "external_id is for credential_source = \"assume_role\"", at: reader.keyPosition("external_id"))
            return nil
        }
        // The table's own keys sign an AssumeRole whose source is `keys` or `credential_process`; nothing else
        // combines with credential_source.
        // r2_temporary mints from the table's own keys (the parent API token's).
        let ownKeys =
            source.value == "assume_role" ? roleSource?.value ?? "keys" : source.value == "r2_temporary" ? "keys" : nil
        let forbidden =
            (ownKeys == "keys" ? [] : CredentialResolver.keys)
            + (ownKeys == "credential_process" ? [] : CredentialProcessConfig.keys)
        for key in forbidden where reader.contains(key) {
            diagnostics.error(
                "\(key) cannot be combined with credential_source = \"\(source.value)\""
                    + (source.value == "assume_role" ? " and source = \"\(ownKeys ?? "keys")\"" : ""),
                at: reader.keyPosition(key))
            return nil
        }
        let caFile = reader.string("credentials_ca_file").map {
            FileReader.resolve($0.value, relativeTo: context.configPath)
        }
        if let caFile, let problem = FileReader.readabilityProblem(caFile) {
            diagnostics.error(
                "cannot read credentials_ca_file '\(caFile)': \(problem.reason)",
                at: reader.keyPosition("credentials_ca_file"))
            return nil
        }
        let environment = context.environment
        switch source.value {
        case "r2_temporary":
            return R2TemporaryCredentialConfig.decode(reader: reader, context: context, at: source.position).map(
                RefreshingCredentialSource.r2Temporary)
        case "assume_role":
            // Both read first, so every mistake among them is reported at once.
            let sts = decodeSTS(reader: reader, context: context, caFile: caFile)
            guard let role = decodeRole(reader: reader, context: context, requiresARN: true), let sts else {
                return nil
            }
            let sourceKind = roleSource?.value ?? "keys"
            let inner: RefreshingCredentialSource?
            switch sourceKind {
            case "keys":
                inner = CredentialResolver(
                    reader: reader, upstreamName: context.upstreamName, environment: environment,
                    configPath: context.configPath
                ).resolve().map(RefreshingCredentialSource.staticKeys)
            case "credential_process":
                guard reader.contains("credential_process") else {
                    diagnostics.error(
                        "source = \"credential_process\" needs credential_process in the same table",
                        at: roleSource?.position ?? source.position)
                    return nil
                }
                inner = CredentialProcessConfig.decode(
                    reader: reader, configPath: context.configPath, environment: environment
                ).map(RefreshingCredentialSource.process)
            case "container", "imds", "web_identity", "chain":
                switch fromEnvironment(sourceKind, environment: environment, sts: sts, caFile: caFile) {
                case .success(let found): inner = found
                case .failure(let error):
                    diagnostics.error(
                        "source = \"\(sourceKind)\": \(error.reason)", at: roleSource?.position ?? source.position)
                    return nil
                }
            default:
                diagnostics.error(
                    "invalid source '\(sourceKind)'; expected one of: "
                        + roleSources.map { "\"\($0)\"" }.joined(separator: ", "),
                    at: roleSource?.position ?? source.position)
                return nil
            }
            guard let inner else { return nil }
            return .assumeRole(
                AssumeRoleConfig(
                    roleARN: role.arn, sessionName: role.sessionName,
                    externalID: reader.string("external_id").map { Secret($0.value) },
                    durationSeconds: role.durationSeconds, sts: sts, source: inner))
        case "web_identity":
            // Both read first, so every mistake among them is reported at once.
            let sts = decodeSTS(reader: reader, context: context, caFile: caFile)
            guard let role = decodeRole(reader: reader, context: context, requiresARN: false), let sts else {
                return nil
            }
            let file = reader.string("web_identity_token_file").map {
                FileReader.resolve($0.value, relativeTo: context.configPath)
            }
            guard let tokenFile = file ?? nonEmpty(environment["AWS_WEB_IDENTITY_TOKEN_FILE"]) else {
                diagnostics.error(
                    "credential_source = \"web_identity\" needs web_identity_token_file, or "
                        + "AWS_WEB_IDENTITY_TOKEN_FILE in presignd's environment (EKS IRSA sets it)",
                    at: source.position)
                return nil
            }
            guard !role.arn.isEmpty else {
                diagnostics.error(
                    "credential_source = \"web_identity\" needs role_arn, or AWS_ROLE_ARN in presignd's environment",
                    at: source.position)
                return nil
            }
            return .webIdentity(
                WebIdentityConfig(
                    tokenFile: tokenFile, roleARN: role.arn, sessionName: role.sessionName,
                    durationSeconds: role.durationSeconds, sts: sts))
        default:
            let sts = decodeSTS(reader: reader, context: context, caFile: caFile)
            switch fromEnvironment(source.value, environment: environment, sts: sts, caFile: caFile) {
            case .success(let found): return found
            case .failure(let error):
                diagnostics.error("credential_source = \"\(source.value)\": \(error.reason)", at: source.position)
                return nil
            }
        }
    }

    /// `container`, `imds`, `web_identity` and `chain` as the AWS SDKs configure them: from the environment.
    static func fromEnvironment(
        _ kind: String, environment: [String: String], sts: STSEndpoint?, caFile: String?
    ) -> Result<RefreshingCredentialSource, AddressSyntaxError> {
        switch kind {
        case "container":
            return ContainerCredentialsConfig.fromEnvironment(environment).map { config in
                var config = config
                if config.endpoint.usesTLS, let caFile { config.endpoint.caFile = caFile }
                return .container(config)
            }
        case "imds":
            return instanceMetadata(environment: environment).map(RefreshingCredentialSource.instanceMetadata)
        case "web_identity":
            guard let file = nonEmpty(environment["AWS_WEB_IDENTITY_TOKEN_FILE"]),
                let arn = nonEmpty(environment["AWS_ROLE_ARN"])
            else {
                return .failure(
                    .init("AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set in presignd's environment"))
            }
            let stsEndpoint = sts ?? STSEndpoint.fromEnvironment(environment, awsRegion: nil, caFile: caFile)
            return .success(
                .webIdentity(
                    WebIdentityConfig(
                        tokenFile: file, roleARN: arn,
                        sessionName: nonEmpty(environment["AWS_ROLE_SESSION_NAME"]) ?? STSEndpoint.defaultSessionName,
                        durationSeconds: STSEndpoint.defaultDurationSeconds, sts: stsEndpoint)))
        default:
            let stsEndpoint = sts ?? STSEndpoint.fromEnvironment(environment, awsRegion: nil, caFile: caFile)
            return CredentialChain.resolve(environment: environment, sts: stsEndpoint, caFile: caFile).map(
                RefreshingCredentialSource.chain)
        }
    }

    /// IMDSv2 at `AWS_EC2_METADATA_SERVICE_ENDPOINT` or 169.254.169.254, unless `AWS_EC2_METADATA_DISABLED`;
    /// each request within `AWS_METADATA_SERVICE_TIMEOUT` seconds when set (the SDKs' variable; default 1).
    static func instanceMetadata(environment: [String: String]) -> Result<MetadataEndpoint, AddressSyntaxError> {
        if environment["AWS_EC2_METADATA_DISABLED"]?.lowercased() == "true" {
            return .failure(.init("AWS_EC2_METADATA_DISABLED=true in presignd's environment"))
        }
        var timeoutMilliseconds: Int?
        if let text = nonEmpty(environment["AWS_METADATA_SERVICE_TIMEOUT"]) {
            guard let seconds = Int(text), (1...60).contains(seconds) else {
                return .failure(
                    .init("AWS_METADATA_SERVICE_TIMEOUT must be whole seconds from 1 to 60, got '\(text)'"))
            }
            timeoutMilliseconds = seconds * 1000
        }
        guard let text = nonEmpty(environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"]) else {
            return .success(
                MetadataEndpoint(host: "169.254.169.254", port: 80, timeoutMilliseconds: timeoutMilliseconds))
        }
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard trimmed.hasPrefix("http://"), case .success(let endpoint) = Endpoint.parse(trimmed) else {
            return .failure(.init("AWS_EC2_METADATA_SERVICE_ENDPOINT must be http://HOST[:PORT], got '\(text)'"))
        }
        return .success(
            MetadataEndpoint(host: endpoint.host, port: endpoint.port, timeoutMilliseconds: timeoutMilliseconds))
    }
}
