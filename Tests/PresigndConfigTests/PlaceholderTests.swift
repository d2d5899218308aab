import PresigndConfig
import PresigndTestSupport
import Testing

/// Placeholders left from the examples load (the example runs as-is) but warn, at their line, with what fails.
@Suite struct PlaceholderTests {
    private func upstream(account: String, id: String, secret: String) -> String {
        """
        [upstream.r2]
        provider = "r2"
        account_id = "\(account)"
        access_key_id = "\(id)"
        secret_access_key = "\(secret)"

        [[bucket]]
        name = "photos"
        """
    }

    @Test func warnsAboutTheExamplesAccountIDAndKeys() throws {
        let text = upstream(
            account: "0123456789abcdef0123456789abcdef", id: "EXAMPLEACCESSKEYID", secret: "example-secret-access-key")
        let configuration = try #require(loaded(text))
        let warnings = described(configuration.warnings)
        #expect(warnings.count == 3)
        #expect(warnings[0].hasPrefix("3:14: account_id of upstream 'r2' is the example's placeholder"))
        #expect(warnings[0].contains("UpstreamDNSFailure") && warnings[0].contains("Account ID"))
        #expect(warnings[1].hasPrefix("4:1: access_key_id of upstream 'r2' is a placeholder"))
        #expect(warnings[1].contains("InvalidAccessKeyId"))
        #expect(warnings[2].hasPrefix("5:1: secret_access_key of upstream 'r2' is a placeholder"))
        #expect(warnings[2].contains("SignatureDoesNotMatch"))
        // The warning names the key, never its value.
        #expect(!warnings.joined().contains("example-secret-access-key"))
        #expect(!warnings.joined().contains("EXAMPLEACCESSKEYID"))
    }

    @Test(arguments: ["YOUR_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE", "4f0c2d…"])
    func warnsAboutDocumentationKeyIDs(id: String) throws {
        let configuration = try #require(
            loaded(upstream(account: "5f3a7c9e1b2d4f6a8c0e2b4d6f8a0c1e", id: id, secret: "a-real-looking-secret")))
        #expect(described(configuration.warnings).map { $0.prefix(30) } == ["4:1: access_key_id of upstream"])
    }

    @Test func namesTheEnvironmentWhenThePlaceholderComesFromIt() throws {
        let text = "[upstream.u]\nprovider = \"s3\"\n\n[[bucket]]\nname = \"photos\"\n"
        let configuration = try #require(
            loaded(text, environment: ["AWS_ACCESS_KEY_ID": "ID", "AWS_SECRET_ACCESS_KEY": "YOUR_SECRET_ACCESS_KEY"]))
        #expect(
            described(configuration.warnings).map { $0.prefix(78) } == [
                "1:1: AWS_SECRET_ACCESS_KEY in the environment of upstream 'u' is a placeholder"
            ])
    }

    @Test func realValuesAndTheSigningSuitesKeysDoNotWarn() throws {
        let configuration = try #require(
            loaded(upstream(account: "5f3a7c9e1b2d4f6a8c0e2b4d6f8a0c1e", id: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI")))
        #expect(configuration.warnings.isEmpty)
    }

    @Test func theShippedExampleWarnsAboutItsPlaceholders() throws {
        let root = try #require(TestPaths.repositoryRoot())
        let configuration = try ConfigLoader.load(path: root + "/config/presignd.example.toml", environment: [:]).get()
        #expect(configuration.warnings.map(\.message).filter { $0.contains("placeholder") }.count == 3)
    }
}

/// A key file that cannot be read says where it was meant to come from.
@Suite struct KeyFileHintTests {
    private func error(_ path: String) -> String {
        let text = """
            [upstream.u]
            provider = "s3"
            access_key_id = "ID"
            secret_access_key_file = "\(path)"

            [[bucket]]
            name = "photos"
            """
        return described(errors(text)).first ?? ""
    }

    @Test func systemdCredentialsExplainLoadCredential() {
        let message = error("/run/credentials/presignd.service/no-such-key-for-tests")
        #expect(message.hasPrefix("4:1: cannot read secret_access_key_file"))
        #expect(
            message.contains("No such file or directory (systemd creates this file from the unit's LoadCredential="))
        #expect(message.contains("/etc/presignd/credentials/no-such-key-for-tests"))
    }

    @Test func dockerSecretsExplainTheMount() {
        #expect(error("/run/secrets/no-such-key-for-tests").contains("(Docker mounts a secret here only inside"))
    }

    @Test func otherPathsGetNoHint() {
        #expect(
            error("/nonexistent/secret")
                == "4:1: cannot read secret_access_key_file '/nonexistent/secret': No such file or directory")
    }
}
