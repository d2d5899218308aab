import PresigndConfig
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// AssumeRole's source, web identity's token file, the chain's name: what happens before any STS call.
@Suite struct STSCredentialProviderTests {
    static let sts = STSEndpoint(endpoint: Endpoint(scheme: .http, host: "127.0.0.1", port: 1), region: "us-east-1")

    @Test func aFailingSourceIsReportedWithItsLinesAndSTSIsNotCalled() {
        // The source is a process that fails; STS at 127.0.0.1:1 would refuse the connection if it were asked.
        var process = CredentialProcessConfig(arguments: ["/bin/sh", "-c", "echo 'sso session expired' >&2; exit 3"])
        process.timeout = .seconds(10)
        let config = AssumeRoleConfig(
            roleARN: "arn:aws:iam::123456789012:role/r", sessionName: "presignd", durationSeconds: 900, sts: Self.sts,
            source: .process(process))
        let provider = AssumeRoleProvider(
            config: config, source: CredentialRefreshers.provider(for: config.source))
        let outcome = provider.fetch()
        guard case .failure(let error) = outcome.result else {
            Issue.record("a failing source delivered credentials")
            return
        }
        #expect(error.message.hasPrefix("the source (credential_process) of the role: "), "\(error.message)")
        #expect(!error.message.contains("127.0.0.1"), "STS was called: \(error.message)")
        #expect(outcome.logLines == ["sso session expired"])
        #expect(provider.kind == "assume_role")
    }

    @Test func anUnreadableOrEmptyTokenFileFailsBeforeSTS() throws {
        let missing = WebIdentityProvider(
            config: WebIdentityConfig(
                tokenFile: "/nonexistent/token", roleARN: "arn:aws:iam::1:role/r", sessionName: "s",
                durationSeconds: 900, sts: Self.sts))
        guard case .failure(let error) = missing.fetch().result else {
            Issue.record("no token, yet credentials")
            return
        }
        #expect(error.message.contains("cannot read the web identity token file /nonexistent/token"))
        let empty = WebIdentityProvider(
            config: WebIdentityConfig(
                tokenFile: "/dev/null", roleARN: "arn:aws:iam::1:role/r", sessionName: "s", durationSeconds: 900,
                sts: Self.sts))
        guard case .failure(let emptyError) = empty.fetch().result else {
            Issue.record("an empty token, yet credentials")
            return
        }
        #expect(emptyError.message.contains("is empty"))
    }

    @Test func theChainNamesTheLinkThatWonAndPassesItsKeysOn() throws {
        let keys = UpstreamCredentials(accessKeyID: "AKIDENV", secretAccessKey: Secret("s"), source: "environment")
        let chain = CredentialChain(
            steps: [CredentialChain.Step(name: "environment", finding: "configured")], winner: "environment",
            selected: .staticKeys(keys))
        let provider = CredentialRefreshers.provider(for: .chain(chain))
        #expect(provider.kind == "chain:environment")
        #expect(try provider.fetch().result.get().credentials.accessKeyID == "AKIDENV")
        let profile = CredentialChain(steps: [], winner: "profile app", selected: .staticKeys(keys))
        #expect(CredentialRefreshers.provider(for: .chain(profile)).kind == "chain:profile")
    }
}
