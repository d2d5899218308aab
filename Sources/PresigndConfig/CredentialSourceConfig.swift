import PresigndSigV4

/// Credentials the daemon fetches and refreshes instead of reading them from the configuration. Indirect: a role
/// is assumed with another source's keys.
public indirect enum RefreshingCredentialSource: Sendable, Hashable, CustomStringConvertible {
    /// `credential_process`.
    case process(CredentialProcessConfig)
    /// `credential_source = "container"`: the ECS / EKS Pod Identity credentials endpoint.
    case container(ContainerCredentialsConfig)
    /// `credential_source = "imds"`: EC2 instance metadata, IMDSv2 only.
    case instanceMetadata(MetadataEndpoint)
    /// `credential_source = "assume_role"`: STS `AssumeRole`, signed with `source`'s keys.
    case assumeRole(AssumeRoleConfig)
    /// `credential_source = "web_identity"`: STS `AssumeRoleWithWebIdentity` with a token file (EKS IRSA).
    case webIdentity(WebIdentityConfig)
    /// `credential_source = "chain"`: the first source the AWS SDKs' chain finds configured.
    case chain(CredentialChain)
    /// Keys that do not change (the environment or a profile), as the source of an assumed role or a chain.
    case staticKeys(UpstreamCredentials)
    /// `credential_source = "r2_temporary"`: R2 temporary credentials minted locally from the parent keys.
    case r2Temporary(R2TemporaryCredentialConfig)

    /// The provider's name, for logs, metrics and `check-config` (never a secret).
    public var description: String {
        switch self {
        case .process(let config): config.description
        case .container(let config): "container credentials \(config.endpoint)\(config.path)"
        case .instanceMetadata(let endpoint): "instance metadata (IMDSv2) \(endpoint)"
        case .assumeRole(let config):
            "assume_role \(config.roleARN) via STS \(config.sts) with keys from \(config.source)"
        case .webIdentity(let config):
            "web_identity \(config.roleARN) with the token in \(config.tokenFile) via STS \(config.sts)"
        case .chain(let chain): "chain: \(chain.winner) won (\(chain.selected))"
        case .staticKeys(let credentials): credentials.source
        case .r2Temporary(let config): config.description
        }
    }
}

/// A credentials endpoint: plain HTTP to a link-local or loopback address, or HTTPS (a container `FULL_URI`).
public struct MetadataEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// HTTPS, verified against `caFile` or the system store.
    public var usesTLS: Bool
    /// `credentials_ca_file` or `AWS_CA_BUNDLE`, for HTTPS.
    public var caFile: String?
    /// How long one request may take (`AWS_METADATA_SERVICE_TIMEOUT` for IMDS); nil: the provider's default.
    public var timeoutMilliseconds: Int?

    public init(
        host: String, port: Int, usesTLS: Bool = false, caFile: String? = nil, timeoutMilliseconds: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.caFile = caFile
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public var description: String {
        (usesTLS ? "https://" : "http://") + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

/// The container credentials endpoint and its authorization, from the AWS SDKs' environment variables.
public struct ContainerCredentialsConfig: Sendable, Hashable {
    public var endpoint: MetadataEndpoint
    /// The request path (with query), e.g. `/v2/credentials/…` (ECS) or `/v1/credentials` (EKS Pod Identity).
    public var path: String
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`: re-read on every fetch (EKS rotates it).
    public var authorizationTokenFile: String?
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`, when no file is given.
    public var authorizationToken: Secret?

    /// The ECS agent's address for `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`.
    public static let ecsHost = "169.254.170.2"
    /// Hosts a `FULL_URI` may name over plain HTTP, as the AWS SDKs allow: the ECS and EKS agents' link-local
    /// addresses (the latter also in IPv6), and loopback.
    static let allowedHosts: Set<String> = ["169.254.170.2", "169.254.170.23", "fd00:ec2::23", "localhost", "::1"]

    /// From the environment, as the SDKs read it (RELATIVE_URI first); nil with the reason otherwise.
    static func fromEnvironment(_ environment: [String: String]) -> Result<
        ContainerCredentialsConfig, AddressSyntaxError
    > {
        var config: ContainerCredentialsConfig
        if let relative = environment["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"], !relative.isEmpty {
            config = ContainerCredentialsConfig(
                endpoint: MetadataEndpoint(host: ecsHost, port: 80),
                path: relative.hasPrefix("/") ? relative : "/" + relative)
        } else if let full = environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"], !full.isEmpty {
            // The SDKs take any https:// host; plain http:// only to the agents' link-local addresses or loopback.
            let usesTLS = full.hasPrefix("https://")
            guard usesTLS || full.hasPrefix("http://") else {
                return .failure(.init("AWS_CONTAINER_CREDENTIALS_FULL_URI must be an http:// or https:// URL"))
            }
            let rest = full.dropFirst(usesTLS ? "https://".count : "http://".count)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            guard case .success(let endpoint) = Endpoint.parse((usesTLS ? "https://" : "http://") + rest[..<slash])
            else {
                return .failure(.init("AWS_CONTAINER_CREDENTIALS_FULL_URI has a malformed host or port"))
            }
            guard usesTLS || allowedHosts.contains(endpoint.host) || endpoint.host.hasPrefix("127.") else {
                return .failure(
                    .init(
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI over http:// must name loopback, 169.254.170.2, "
                            + "169.254.170.23 or fd00:ec2::23 (plain HTTP to anything else would expose the token; "
                            + "use https://)"))
            }
            let path = slash == rest.endIndex ? "/" : String(rest[slash...])
            config = ContainerCredentialsConfig(
                endpoint: MetadataEndpoint(
                    host: endpoint.host, port: endpoint.port, usesTLS: usesTLS,
                    caFile: usesTLS ? environment["AWS_CA_BUNDLE"].flatMap { $0.isEmpty ? nil : $0 } : nil),
                path: path)
        } else {
            return .failure(
                .init(
                    "neither AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set "
                        + "in presignd's environment (ECS and EKS Pod Identity set them in the container)"))
        }
        if let file = environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"], !file.isEmpty {
            config.authorizationTokenFile = file
        } else if let token = environment["AWS_CONTAINER_AUTHORIZATION_TOKEN"], !token.isEmpty {
            config.authorizationToken = Secret(token)
        }
        return .success(config)
    }
}
