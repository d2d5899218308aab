import PresigndSigV4

/// `credential_source = "chain"`: the AWS SDKs' default credential chain, resolved when the configuration loads
/// from what is configured (environment variables, the shared files), never by fetching: environment keys, then
/// the profile (`AWS_PROFILE` or `default`) in `~/.aws/credentials` and `~/.aws/config` (keys, `role_arn` with
/// `source_profile` / `credential_source` / `web_identity_token_file`, `credential_process`), then web identity
/// (`AWS_WEB_IDENTITY_TOKEN_FILE`), then container credentials, then instance metadata (IMDSv2). As in the SDKs,
/// the first source that is configured wins; a configured source that fails to fetch is not skipped.
public struct CredentialChain: Sendable, Hashable {
    /// One link of the chain and what was found there, for `check-config`.
    public struct Step: Sendable, Hashable, CustomStringConvertible {
        public var name: String
        public var finding: String

        public init(name: String, finding: String) {
            self.name = name
            self.finding = finding
        }

        public var description: String { "\(name): \(finding)" }
    }

    /// Every link looked at, in order, the winner last.
    public var steps: [Step]
    /// The winning link's name.
    public var winner: String
    /// Its source.
    public var selected: RefreshingCredentialSource

    public init(steps: [Step], winner: String, selected: RefreshingCredentialSource) {
        self.steps = steps
        self.winner = winner
        self.selected = selected
    }

    static func resolve(
        environment: [String: String], sts: STSEndpoint, caFile: String?
    ) -> Result<CredentialChain, AddressSyntaxError> {
        var steps: [Step] = []
        func won(_ name: String, _ source: RefreshingCredentialSource) -> Result<CredentialChain, AddressSyntaxError> {
            steps.append(Step(name: name, finding: "configured: \(source)"))
            return .success(CredentialChain(steps: steps, winner: name, selected: source))
        }
        let id = nonEmpty(environment["AWS_ACCESS_KEY_ID"])
        let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"])
        if let id, let secret {
            let keys = UpstreamCredentials(
                accessKeyID: id, secretAccessKey: Secret(secret),
                sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"]).map(Secret.init), source: "environment")
            return won("environment", .staticKeys(keys))
        }
        steps.append(Step(name: "environment", finding: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set"))

        let profileName = nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        let profiles = SharedProfiles.load(environment: environment)
        switch profiles.resolve(profileName, environment: environment, sts: sts, caFile: caFile) {
        case .failure(let error):
            return .failure(.init("profile '\(profileName)': \(error.reason)"))
        case .success(let source?):
            return won("profile \(profileName)", source)
        case .success(nil):
            steps.append(Step(name: "profile \(profileName)", finding: "not in \(profiles.paths)"))
        }

        if nonEmpty(environment["AWS_WEB_IDENTITY_TOKEN_FILE"]) != nil {
            let found = RefreshingCredentialSource.fromEnvironment(
                "web_identity", environment: environment, sts: sts, caFile: caFile)
            switch found {
            case .success(let source): return won("web_identity", source)
            case .failure(let error): return .failure(error)
            }
        }
        steps.append(Step(name: "web_identity", finding: "AWS_WEB_IDENTITY_TOKEN_FILE not set"))

        if nonEmpty(environment["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"]) != nil
            || nonEmpty(environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"]) != nil
        {
            let found = RefreshingCredentialSource.fromEnvironment(
                "container", environment: environment, sts: sts, caFile: caFile)
            switch found {
            case .success(let source): return won("container", source)
            case .failure(let error): return .failure(error)
            }
        }
        steps.append(Step(name: "container", finding: "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/FULL_URI not set"))

        switch RefreshingCredentialSource.instanceMetadata(environment: environment) {
        case .success(let endpoint): return won("imds", .instanceMetadata(endpoint))
        case .failure(let error):
            steps.append(Step(name: "imds", finding: error.reason))
            return .failure(
                .init("no source in the chain is configured: " + steps.map(\.description).joined(separator: "; ")))
        }
    }
}
