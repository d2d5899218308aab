import PresigndConfig
import PresigndSigV4

/// A source of upstream credentials. `fetch` may block (it runs a process, or one day makes an HTTP call), so
/// the daemon calls it on a thread of its own, never on an event loop; `CredentialRefresher` decides when.
protocol CredentialProvider: Sendable {
    /// For logs and metrics: `static`, `credential_process`.
    var kind: String { get }
    /// One attempt: credentials (with their expiry, if any) or why not, plus lines for the log.
    func fetch() -> CredentialFetchOutcome
}

extension CredentialProvider {
    /// What to check when fetching keeps failing, for the log's `fix` (by kind; a chain's by its winner).
    var fixHint: String {
        let base = kind.hasPrefix("chain:") ? String(kind.dropFirst("chain:".count)) : kind
        switch base {
        case "credential_process": return "the command must print AWS CLI JSON version 1 and exit 0"
        case "container":
            return "the container credentials agent must answer at AWS_CONTAINER_CREDENTIALS_*_URI (ECS: a task "
                + "role; EKS: a Pod Identity association) with the token from AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]"
        case "imds":
            return "the instance needs an instance profile, and IMDSv2 must answer (in a container: hop limit 2)"
        case "assume_role":
            return "the source keys must be allowed sts:AssumeRole on role_arn, and the role's trust policy must "
                + "allow them (with external_id when it asks for one)"
        case "web_identity":
            return "the token file must hold a current OIDC token, and the role's trust policy must trust its issuer "
                + "(EKS IRSA: the service account's role-arn annotation)"
        case "r2_temporary":
            return "the parent keys must be an R2 API token's access key id and secret access key"
        default: return "see the reason"
        }
    }
}

/// What one fetch produced. `logLines` are the provider's own diagnostics (a process's stderr); they never hold
/// the credentials.
struct CredentialFetchOutcome: Sendable {
    var result: Result<FetchedCredentials, CredentialFetchError>
    var logLines: [String] = []
}

/// Keys from the configuration (inline, `*_file`, a profile, the environment): today's behaviour, delivered at
/// once and never expiring, so the refresher publishes them once and schedules nothing. Workers sign static
/// upstreams straight from `UpstreamTarget.credentials`; this is the same thing through the provider interface.
struct StaticCredentialProvider: CredentialProvider {
    var credentials: Credentials
    var kind: String { "static" }

    func fetch() -> CredentialFetchOutcome {
        CredentialFetchOutcome(
            result: .success(FetchedCredentials(credentials: credentials, expiresAtMilliseconds: nil)))
    }
}

/// `credential_process`: runs the command (`CredentialProcessRunner`) and reads its JSON.
struct ProcessCredentialProvider: CredentialProvider {
    var config: CredentialProcessConfig
    var kind: String { "credential_process" }

    func fetch() -> CredentialFetchOutcome {
        let outcome = CredentialProcessRunner.run(config)
        let lines = outcome.stderr.split(whereSeparator: \.isNewline).filter { !$0.isEmpty }.map(String.init)
        return CredentialFetchOutcome(result: outcome.result, logLines: lines)
    }
}
