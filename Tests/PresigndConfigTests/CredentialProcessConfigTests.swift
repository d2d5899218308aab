import PresigndConfig
import Testing

/// `credential_process` in `[upstream.NAME]`: parsed and checked at load (never run), errors at `file:line:col`.
@Suite struct CredentialProcessConfigTests {
    static func upstream(_ lines: String) -> String {
        """
        [upstream.store]
        provider = "custom"
        endpoint = "https://store.example"
        \(lines)

        [[bucket]]
        name = "data"
        upstream = "store"
        """
    }

    @Test func loadsTheCommandAndTimeoutWithoutRunningIt() throws {
        let configuration = try #require(
            loaded(
                Self.upstream(
                    #"credential_process = "/bin/false --profile 'my team'""# + "\ncredential_process_timeout = \"5s\"")
            ))
        let upstream = try #require(configuration.upstreams["store"])
        let process = try #require(upstream.credentialProcess)
        #expect(process.arguments == ["/bin/false", "--profile", "my team"])
        #expect(process.timeout == .seconds(5))
        #expect(upstream.credentials.source == "credential_process")
        #expect(process.description == "credential_process /bin/false")
    }

    @Test func bareProgramNamesAreFoundOnPath() throws {
        let configuration = try #require(
            loaded(Self.upstream(#"credential_process = "true""#), environment: ["PATH": "/nonexistent:/bin:/usr/bin"]))
        let arguments = configuration.upstreams["store"]?.credentialProcess?.arguments ?? []
        #expect(arguments.count == 1 && arguments[0].hasSuffix("/true"))
        #expect(configuration.upstreams["store"]?.credentialProcess?.timeout == .seconds(30))  // the default
    }

    @Test func missingProgramIsAnErrorAtTheValue() {
        #expect(
            described(errors(Self.upstream(#"credential_process = "/nonexistent/issue-keys --fast""#)))
                == [
                    "4:22: credential_process program '/nonexistent/issue-keys' is not an executable file "
                        + "(relative paths are relative to the configuration file)"
                ])
        #expect(
            described(
                errors(Self.upstream(#"credential_process = "no-such-program-here""#), environment: ["PATH": "/bin"]))
                == ["4:22: credential_process program 'no-such-program-here' is not an executable file on PATH"])
    }

    @Test func cannotBeCombinedWithOtherCredentialKeys() {
        let text = Self.upstream(
            "credential_process = \"/bin/true\"\naccess_key_id = \"AKID\"\nsecret_access_key = \"S\"")
        #expect(
            described(errors(text)) == [
                "5:1: access_key_id cannot be combined with credential_process (one credential source per upstream)",
                "6:1: secret_access_key cannot be combined with credential_process (one credential source per upstream)",
            ])
    }

    @Test func unterminatedQuotesAndStrayTimeoutsAreErrors() {
        #expect(
            described(errors(Self.upstream(#"credential_process = "/bin/true 'open""#)))
                == ["4:22: credential_process must be a command line (program and arguments; quotes must be closed)"])
        let stray = errors(
            Self.upstream("access_key_id = \"A\"\nsecret_access_key = \"S\"\ncredential_process_timeout = \"5s\""))
        #expect(described(stray) == ["6:1: credential_process_timeout needs credential_process"])
    }

    @Test(arguments: [
        (#"a b  c"#, ["a", "b", "c"]), (#"a 'b c' d"#, ["a", "b c", "d"]),
        (#"a "b \"c\" \\ \d""#, ["a", #"b "c" \ \d"#]),
        (#"a\ b"#, ["a b"]), (#"x''"#, ["x"]), (#"'' y"#, ["", "y"]),
    ])
    func splitsCommandLinesLikeAPOSIXShell(text: String, words: [String]) {
        #expect(CredentialProcessConfig.split(text) == words)
    }
}
