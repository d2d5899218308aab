import PresigndConfig
import PresigndTestSupport
import Testing

@Suite struct CredentialTests {
    private let header = "[upstream.u]\nprovider = \"s3\"\n"
    private let bucket = "\n[[bucket]]\nname = \"photos\"\n"
    private let environment = [
        "AWS_ACCESS_KEY_ID": "ENVKEYID", "AWS_SECRET_ACCESS_KEY": "env-secret-value", "AWS_SESSION_TOKEN": "env-token",
    ]

    private func credentials(_ body: String, environment: [String: String] = [:]) -> UpstreamCredentials? {
        loaded(header + body + bucket, environment: environment)?.upstreams["u"]?.credentials
    }

    @Test func inlineKeysWinOverTheEnvironment() throws {
        let found = try #require(
            credentials("access_key_id = \"INLINEID\"\nsecret_access_key = \"inline-secret\"", environment: environment)
        )
        #expect(found.accessKeyID == "INLINEID" && found.secretAccessKey.exposedValue == "inline-secret")
        #expect(found.sessionToken == nil && found.source == "inline")
    }

    @Test func readsKeyFilesTrimmingTheTrailingNewline() throws {
        let directory = try TemporaryDirectory()
        let id = try directory.write("id", "FILEID\n")
        let secret = try directory.write("secret", "file-secret\r\n")
        let token = try directory.write("token", "file-token")
        let body =
            "access_key_id_file = \"\(id)\"\nsecret_access_key_file = \"\(secret)\"\nsession_token_file = \"\(token)\""
        let found = try #require(credentials(body, environment: environment))
        #expect(found.accessKeyID == "FILEID" && found.secretAccessKey.exposedValue == "file-secret")
        #expect(found.sessionToken?.exposedValue == "file-token" && found.source == "file")
        let mixed = try #require(credentials("access_key_id = \"INLINEID\"\nsecret_access_key_file = \"\(secret)\""))
        #expect(mixed.source == "inline+file")
    }

    @Test func resolvesKeyFilesRelativeToTheConfigurationFile() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write("secret", "relative-secret\n")
        let path = try directory.write(
            "presignd.toml", header + "access_key_id = \"ID\"\nsecret_access_key_file = \"secret\"\n" + bucket)
        let configuration = try ConfigLoader.load(path: path, environment: [:]).get()
        #expect(configuration.upstreams["u"]?.credentials.secretAccessKey.exposedValue == "relative-secret")
    }

    @Test func readsAProfileFromASharedCredentialsFile() throws {
        let directory = try TemporaryDirectory()
        let ini = """
            [default]
            aws_access_key_id = DEFAULTID
            aws_secret_access_key = default-secret

            # work account
            [profile work]
            aws_access_key_id=WORKID
            aws_secret_access_key = work-secret
            aws_session_token = work-token
            """
        let file = try directory.write("credentials", ini)
        let work = try #require(
            credentials("credentials_profile = \"work\"\ncredentials_file = \"\(file)\"", environment: environment))
        #expect(work.accessKeyID == "WORKID" && work.secretAccessKey.exposedValue == "work-secret")
        #expect(work.sessionToken?.exposedValue == "work-token" && work.source == "profile work")
        let fromHome = try #require(
            credentials("credentials_profile = \"default\"", environment: ["AWS_SHARED_CREDENTIALS_FILE": file]))
        #expect(fromHome.accessKeyID == "DEFAULTID")
        #expect(
            described(errors(header + "credentials_profile = \"nope\"\ncredentials_file = \"\(file)\"" + bucket))
                == ["3:23: profile 'nope' not found in '\(file)'"])
    }

    @Test func fallsBackToTheEnvironment() throws {
        let found = try #require(credentials("", environment: environment))
        #expect(found.accessKeyID == "ENVKEYID" && found.secretAccessKey.exposedValue == "env-secret-value")
        #expect(found.sessionToken?.exposedValue == "env-token" && found.source == "environment")
    }

    @Test(
        arguments: [
            (
                "", [:],
                "1:1: no credentials for upstream 'u'. Tried, in order: access_key_id and secret_access_key (or "
                    + "access_key_id_file and secret_access_key_file) in [upstream.u]: not set; credentials_profile: "
                    + "not set; AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in presignd's environment: neither is set. "
                    + "Set one of them, e.g. access_key_id = \"…\" and secret_access_key_file = "
                    + "\"/etc/presignd/credentials/secret_access_key\" (sudo and systemd do not pass on your shell's "
                    + "environment)"
            ),
            (
                "", ["AWS_ACCESS_KEY_ID": "X"],
                "1:1: no credentials for upstream 'u'. Tried, in order: access_key_id and secret_access_key (or "
                    + "access_key_id_file and secret_access_key_file) in [upstream.u]: not set; credentials_profile: "
                    + "not set; AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in presignd's environment: "
                    + "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not. Set one of them, e.g. "
                    + "access_key_id = \"…\" and secret_access_key_file = \"/etc/presignd/credentials/secret_access_key\" "
                    + "(sudo and systemd do not pass on your shell's environment)"
            ),
            (
                "access_key_id = \"ID\"", [:],
                "1:1: upstream 'u' sets access_key_id but not secret_access_key (or secret_access_key_file)"
            ),
            (
                "access_key_id = \"ID\"\nsecret_access_key = \"s\"\nsecret_access_key_file = \"/x\"", [:],
                "5:1: set either secret_access_key or secret_access_key_file, not both"
            ),
            (
                "access_key_id = \"ID\"\nsecret_access_key_file = \"/nonexistent/secret\"", [:],
                "4:1: cannot read secret_access_key_file '/nonexistent/secret': No such file or directory"
            ),
            (
                "access_key_id = \"ID\"\nsecret_access_key = \"s\"\ncredentials_profile = \"p\"", [:],
                "5:1: credentials_profile cannot be combined with access_key_id and secret_access_key"
            ),
            (
                "session_token = \"t\"", [:],
                "3:1: session_token needs access_key_id and secret_access_key in the same table"
            ),
            ("credentials_file = \"/x\"", [:], "3:1: credentials_file needs credentials_profile"),
            (
                "credentials_profile = \"p\"", [:],
                "3:23: cannot locate the credentials file for profile 'p': set "
                    + "credentials_file, or HOME or AWS_SHARED_CREDENTIALS_FILE in the environment"
            ),
            (
                "access_key_id = \"ID\"\nsecret_access_key = 42", [:],
                "4:21: 'secret_access_key': expected a string, found an integer"
            ),
        ] as [(String, [String: String], String)])
    func reportsCredentialMistakesAtTheirKeys(body: String, environment: [String: String], expected: String) {
        #expect(described(errors(header + body + bucket, environment: environment)) == [expected])
    }

    @Test(arguments: [
        "secret_access_key = \"TOPSECRETVALUE\\q\"",
        "secret_access_key = TOPSECRETVALUE",
        "secret_access_key = \"TOPSECRETVALUE",
        "secret_access_key = 'TOPSECRETVALUE",
        "secret_access_key = \"TOPSECRETVALUE\" trailing",
        "secret_access_key = [\"TOPSECRETVALUE\"]",
        "secret_access_key = \"\\uZZZZTOPSECRETVALUE\"",
        "TOPSECRETVALUE",
    ])
    func neverEchoesSecretValuesInErrors(line: String) {
        let text = header + "access_key_id = \"ID\"\n" + line + "\n" + bucket
        let found = errors(text)
        #expect(!found.isEmpty)
        #expect(!ConfigErrors(errors: found).description.contains("TOPSECRETVALUE"), "\(found)")
    }

    @Test func secretsAreRedactedInDescriptions() throws {
        let found = try #require(
            credentials(
                "access_key_id = \"ID\"\nsecret_access_key = \"TOPSECRETVALUE\"\nsession_token = \"TOKENVALUE\""))
        let secret = found.secretAccessKey
        for text in [
            "\(secret)", String(describing: secret), String(reflecting: secret), "\(found)", String(reflecting: found),
        ] {
            #expect(!text.contains("TOPSECRETVALUE") && !text.contains("TOKENVALUE"), "\(text)")
        }
        var dumped = ""
        dump(found, to: &dumped)
        #expect(!dumped.contains("TOPSECRETVALUE") && !dumped.contains("TOKENVALUE"), "\(dumped)")
        #expect(secret.description == "<redacted>" && secret.debugDescription == "<redacted>")
    }
}
