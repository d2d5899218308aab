import PresigndSigV4

/// Credentials the daemon fetches and refreshes instead of reading them from the configuration.
public enum RefreshingCredentialSource: Sendable, Hashable, CustomStringConvertible {
    /// `credential_process`.
    case process(CredentialProcessConfig)
    /// `credential_source = "container"`: the ECS / EKS Pod Identity credentials endpoint.
    case container(ContainerCredentialsConfig)
    /// `credential_source = "imds"`: EC2 instance metadata, IMDSv2 only.
    case instanceMetadata(MetadataEndpoint)

    /// The provider's name, for logs, metrics and `check-config` (never a secret).
    public var description: String {
        switch self {
        case .process(let config): config.description
        case .container(let config): "container credentials \(config.endpoint)\(config.path)"
        case .instanceMetadata(let endpoint): "instance metadata (IMDSv2) \(endpoint)"
        }
    }
}

/// A plain-HTTP endpoint on a link-local or loopback address.
public struct MetadataEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { "http://" + (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
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
            guard full.hasPrefix("http://") else {
                return .failure(
                    .init("AWS_CONTAINER_CREDENTIALS_FULL_URI must be an http:// URL (https is not supported)"))
            }
            let rest = full.dropFirst("http://".count)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            guard case .success(let endpoint) = Endpoint.parse("http://" + rest[..<slash]) else {
                return .failure(.init("AWS_CONTAINER_CREDENTIALS_FULL_URI has a malformed host or port"))
            }
            guard allowedHosts.contains(endpoint.host) || endpoint.host.hasPrefix("127.") else {
                return .failure(
                    .init(
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI must name loopback, 169.254.170.2, 169.254.170.23 or "
                            + "fd00:ec2::23 (plain HTTP to anything else would expose the token)"))
            }
            let path = slash == rest.endIndex ? "/" : String(rest[slash...])
            config = ContainerCredentialsConfig(
                endpoint: MetadataEndpoint(host: endpoint.host, port: endpoint.port), path: path)
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

extension RefreshingCredentialSource {
    static let keys = ["credential_source"]

    /// `credential_source = "container" | "imds"`, configured from the environment the way the AWS SDKs are;
    /// nil with errors reported when it is combined with other credential keys or the environment lacks what it
    /// needs.
    static func decode(reader: TableReader, environment: [String: String]) -> RefreshingCredentialSource? {
        let diagnostics = reader.diagnostics
        guard let source = reader.string("credential_source") else { return nil }
        for key in CredentialResolver.keys + CredentialProcessConfig.keys where reader.contains(key) {
            diagnostics.error(
                "\(key) cannot be combined with credential_source (one credential source per upstream)",
                at: reader.keyPosition(key))
            return nil
        }
        switch source.value {
        case "container":
            switch ContainerCredentialsConfig.fromEnvironment(environment) {
            case .success(let config): return .container(config)
            case .failure(let error):
                diagnostics.error("credential_source = \"container\": \(error.reason)", at: source.position)
                return nil
            }
        case "imds":
            if environment["AWS_EC2_METADATA_DISABLED"]?.lowercased() == "true" {
                diagnostics.error(
                    "credential_source = \"imds\", but AWS_EC2_METADATA_DISABLED=true in presignd's environment",
                    at: source.position)
                return nil
            }
            guard let text = environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"], !text.isEmpty else {
                return .instanceMetadata(MetadataEndpoint(host: "169.254.169.254", port: 80))
            }
            var trimmed = text
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            guard trimmed.hasPrefix("http://"), case .success(let endpoint) = Endpoint.parse(trimmed) else {
                diagnostics.error(
                    "AWS_EC2_METADATA_SERVICE_ENDPOINT must be http://HOST[:PORT], got '\(text)'", at: source.position)
                return nil
            }
            return .instanceMetadata(MetadataEndpoint(host: endpoint.host, port: endpoint.port))
        default:
            diagnostics.error(
                "invalid credential_source '\(source.value)'; expected \"container\" or \"imds\"", at: source.position)
            return nil
        }
    }
}
