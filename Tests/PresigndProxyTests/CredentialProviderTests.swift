import PresigndConfig
import PresigndIO
import PresigndSigV4
import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// The providers behind the refresher: static keys, and `credential_process` run for real through `/bin/sh`.
@Suite struct CredentialProviderTests {
    static func process(_ script: String, timeout: ConfigDuration = .seconds(10)) -> ProcessCredentialProvider {
        var config = CredentialProcessConfig(arguments: ["/bin/sh", "-c", script])
        config.timeout = timeout
        return ProcessCredentialProvider(config: config)
    }

    @Test func staticKeysNeverExpire() throws {
        let provider = StaticCredentialProvider(
            credentials: Credentials(accessKeyID: "AKID", secretAccessKey: Secret("s")))
        let fetched = try provider.fetch().result.get()
        #expect(fetched.credentials.accessKeyID == "AKID")
        #expect(fetched.expiresAtMilliseconds == nil)
        #expect(provider.kind == "static")
    }

    @Test func processOutputBecomesCredentialsAndStderrBecomesLogLines() throws {
        let outcome = Self.process(
            #"echo 'working on it' >&2; echo '{"Version": 1, "AccessKeyId": "AKIDPROC", "SecretAccessKey": "sec","#
                + #" "SessionToken": "tok", "Expiration": "2030-01-01T00:00:00Z"}'"#
        ).fetch()
        let fetched = try outcome.result.get()
        #expect(fetched.credentials.accessKeyID == "AKIDPROC")
        #expect(fetched.credentials.sessionToken?.exposedValue == "tok")
        #expect(fetched.expiresAtMilliseconds == 1_893_456_000_000)
        #expect(outcome.logLines == ["working on it"])
    }

    @Test func nonZeroExitIsAFailureWithTheStatusAndNoStdout() {
        let outcome = Self.process(#"echo '{"Version":1,"AccessKeyId":"A","SecretAccessKey":"leak"}'; exit 3"#).fetch()
        guard case .failure(let error) = outcome.result else {
            Issue.record("a failing process delivered credentials")
            return
        }
        #expect(error.message == "credential_process exited with status 3")
        #expect(!outcome.logLines.joined().contains("leak"))
    }

    @Test func malformedOutputNamesTheProblemNotTheOutput() {
        guard case .failure(let error) = Self.process("echo secret-ish-garbage").fetch().result else {
            Issue.record("garbage accepted")
            return
        }
        #expect(error.message.hasPrefix("credential_process: output is not a JSON object"))
        #expect(!error.message.contains("secret-ish-garbage"))
    }

    @Test func aProcessThatOutlivesItsTimeoutIsKilled() {
        let started = MonotonicClock.microseconds() / 1000
        let outcome = Self.process("exec sleep 30", timeout: ConfigDuration(milliseconds: 300)).fetch()
        guard case .failure(let error) = outcome.result else {
            Issue.record("a hung process delivered credentials")
            return
        }
        #expect(error.message == "credential_process timed out after 300ms")
        #expect(MonotonicClock.microseconds() / 1000 - started < 10_000)
    }

    /// The daemon ignores SIGPIPE; the process must not inherit that (a pipeline in the script would misbehave).
    @Test func theProcessGetsTheDefaultSIGPIPEDisposition() throws {
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let fetched = try Self.process(
            #"echo "{\"Version\":1,\"AccessKeyId\":\"$(grep SigIgn /proc/self/status | cut -f2)\",\"SecretAccessKey\":\"s\"}""#
        ).fetch().result.get()
        let ignored = try #require(UInt64(fetched.credentials.accessKeyID, radix: 16))
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) == 0)
    }

    @Test func aMissingProgramIsReported() {
        let provider = ProcessCredentialProvider(config: CredentialProcessConfig(arguments: ["/nonexistent/program"]))
        guard case .failure(let error) = provider.fetch().result else {
            Issue.record("a missing program delivered credentials")
            return
        }
        #expect(error.message.contains("/nonexistent/program"))
    }
}
