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
