import PresigndConfig

#if canImport(Glibc)
    import Glibc
#endif

/// The container credentials endpoint (ECS task roles, EKS Pod Identity): `GET` the configured path (over HTTPS
/// when the `FULL_URI` says so) with the `Authorization` token, which is read from its file on every fetch (EKS
/// rotates it). The answer is the
/// credentials JSON with `Token` and `Expiration`.
struct ContainerCredentialProvider: CredentialProvider {
    var config: ContainerCredentialsConfig
    var kind: String { "container" }
    /// The SDKs' short timeouts: the agent is local.
    static let timeoutMilliseconds = 5_000

    func fetch() -> CredentialFetchOutcome {
        var headers: [(String, String)] = []
        if let file = config.authorizationTokenFile {
            switch FileReader.readToken(file) {
            case .failure(let error):
                return CredentialFetchOutcome(
                    result: .failure(
                        CredentialFetchError("cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: \(error.reason)")))
            case .success(let token):
                headers.append(("Authorization", token))
            }
        } else if let token = config.authorizationToken {
            headers.append(("Authorization", token.exposedValue))
        }
        let endpoint = config.endpoint
        var tls: TLSClientContext?
        if endpoint.usesTLS {
            do {
                tls = try TLSClientContext(caFile: endpoint.caFile, verifiesPeer: true)
            } catch {
                return CredentialFetchOutcome(result: .failure(CredentialFetchError("container credentials: \(error)")))
            }
        }
        let response = MetadataHTTPClient.request(
            method: "GET", host: endpoint.host, port: endpoint.port, path: config.path, headers: headers, tls: tls,
            timeoutMilliseconds: Self.timeoutMilliseconds)
        return CredentialFetchOutcome(result: Self.credentials(from: response, what: "container credentials endpoint"))
    }

    /// A 200 with the credentials JSON, or why not (the status, never the body: it may hold secrets).
    static func credentials(
        from response: Result<MetadataHTTPClient.Response, CredentialFetchError>, what: String
    ) -> Result<FetchedCredentials, CredentialFetchError> {
        switch response {
        case .failure(let error):
            return .failure(CredentialFetchError("\(what): \(error.message)"))
        case .success(let answer) where answer.status != 200:
            return .failure(CredentialFetchError("\(what) answered HTTP \(answer.status)"))
        case .success(let answer):
            return ProcessCredentials.parse(answer.body, format: .metadata).mapError {
                CredentialFetchError("\(what): \($0.message)")
            }
        }
    }
}

/// EC2 instance metadata, IMDSv2 only: `PUT /latest/api/token` for a session token, then the role's name and its
/// credentials with that token, each request under the SDKs' short timeout (1 s, or `AWS_METADATA_SERVICE_TIMEOUT`).
struct InstanceMetadataCredentialProvider: CredentialProvider {
    var endpoint: MetadataEndpoint
    var kind: String { "imds" }
    static let defaultTimeoutMilliseconds = 1_000
    var timeoutMilliseconds: Int { endpoint.timeoutMilliseconds ?? Self.defaultTimeoutMilliseconds }
    /// How long the IMDSv2 session token lives (the SDKs ask for 6 hours; one is made per fetch).
    static let tokenTTLSeconds = 21_600
    static let credentialsPath = "/latest/meta-data/iam/security-credentials/"

    func fetch() -> CredentialFetchOutcome {
        CredentialFetchOutcome(result: fetchCredentials())
    }

    private func fetchCredentials() -> Result<FetchedCredentials, CredentialFetchError> {
        func call(_ method: String, _ path: String, _ headers: [(String, String)]) -> Result<
            String, CredentialFetchError
        > {
            switch MetadataHTTPClient.request(
                method: method, host: endpoint.host, port: endpoint.port, path: path, headers: headers,
                timeoutMilliseconds: timeoutMilliseconds)
            {
            case .failure(let error):
                return .failure(CredentialFetchError("instance metadata \(path): \(error.message)"))
            case .success(let answer) where answer.status != 200:
                return .failure(
                    CredentialFetchError("instance metadata \(method) \(path) answered HTTP \(answer.status)"))
            case .success(let answer): return .success(String(decoding: answer.body, as: UTF8.self))
            }
        }
        let token: String
        switch call(
            "PUT", "/latest/api/token", [("X-aws-ec2-metadata-token-ttl-seconds", String(Self.tokenTTLSeconds))])
        {
        case .failure(let error): return .failure(error)
        case .success(let text): token = Self.firstLine(text)
        }
        let authorized = [("X-aws-ec2-metadata-token", token)]
        let role: String
        switch call("GET", Self.credentialsPath, authorized) {
        case .failure(let error): return .failure(error)
        case .success(let text):
            let first = Self.firstLine(text)
            guard !first.isEmpty, !first.contains("/") else {
                return .failure(
                    CredentialFetchError("instance metadata lists no IAM role (attach an instance profile)"))
            }
            role = first
        }
        let response = MetadataHTTPClient.request(
            method: "GET", host: endpoint.host, port: endpoint.port, path: Self.credentialsPath + role,
            headers: authorized, timeoutMilliseconds: timeoutMilliseconds)
        return ContainerCredentialProvider.credentials(from: response, what: "instance metadata role '\(role)'")
    }

    /// The first line, without surrounding spaces (tokens and role names may end in a newline).
    static func firstLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).first.map { String($0.trimmingSpaces()) } ?? ""
    }
}
