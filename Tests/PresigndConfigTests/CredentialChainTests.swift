import PresigndConfig
import PresigndTestSupport
import Testing

/// `credential_source = "chain"`: the SDKs' order, resolved from the environment and the shared files only.
@Suite struct CredentialChainTests {
    static let text = CredentialProcessConfigTests.upstream("credential_source = \"chain\"")

    static func chain(_ environment: [String: String]) -> CredentialChain? {
        guard
            case .chain(let chain)? = loaded(text, environment: environment)?.upstreams["store"]?.refreshingCredentials
        else { return nil }
        return chain
    }

    @Test func environmentKeysComeFirst() throws {
        let chain = try #require(
            Self.chain([
                "AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t",
                "AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r", "HOME": "/nonexistent",
            ]))
        #expect(chain.winner == "environment" && chain.steps.count == 1)
        guard case .staticKeys(let keys) = chain.selected else {
            Issue.record("not static keys")
            return
        }
        #expect(keys.accessKeyID == "AKIDENV" && keys.sessionToken?.exposedValue == "t")
    }

    @Test func aProfileWithRoleArnAndSourceProfileInTheConfigFile() throws {
        let directory = try TemporaryDirectory()
        let credentials = try directory.write(
            "credentials", "[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = base-secret\n")
        let config = try directory.write(
            "config",
            """
            [default]
            region = us-east-1

            [profile app]
            role_arn = arn:aws:iam::123456789012:role/app
            source_profile = base
            role_session_name = app-session
            external_id = ext
            duration_seconds = 1800
            region = eu-west-2
            """)
        let chain = try #require(
            Self.chain([
                "AWS_PROFILE": "app", "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_CONFIG_FILE": config,
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/creds",
            ]))
        #expect(chain.winner == "profile app")
        #expect(chain.steps.map(\.name) == ["environment", "profile app"])
        guard case .assumeRole(let role) = chain.selected, case .staticKeys(let keys) = role.source else {
            Issue.record("not an assumed role with the base profile's keys: \(chain.selected)")
            return
        }
        #expect(role.roleARN == "arn:aws:iam::123456789012:role/app" && role.sessionName == "app-session")
        #expect(role.externalID?.exposedValue == "ext" && role.durationSeconds == 1800)
        #expect(role.sts.region == "eu-west-2" && role.sts.endpoint.host == "sts.eu-west-2.amazonaws.com")
        #expect(keys.accessKeyID == "AKIDBASE" && keys.source == "profile base")
    }

    @Test func credentialsProfileNamingARoleProfileAssumesTheRole() throws {
        let directory = try TemporaryDirectory()
        let credentials = try directory.write(
            "credentials", "[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = base-secret\n")
        let config = try directory.write(
            "config", "[profile app]\nrole_arn = arn:aws:iam::123456789012:role/app\nsource_profile = base\n")
        let text = CredentialProcessConfigTests.upstream(
            "credentials_profile = \"app\"\ncredentials_file = \"\(credentials)\"")
        let upstream = try #require(loaded(text, environment: ["AWS_CONFIG_FILE": config])?.upstreams["store"])
        guard case .assumeRole(let role)? = upstream.refreshingCredentials, case .staticKeys(let keys) = role.source
        else {
            Issue.record("not an assumed role: \(String(describing: upstream.refreshingCredentials))")
            return
        }
        #expect(role.roleARN == "arn:aws:iam::123456789012:role/app" && keys.accessKeyID == "AKIDBASE")
        #expect(upstream.credentials.source == "credentials_profile")
        // A profile of plain keys stays static, as before.
        let plain = CredentialProcessConfigTests.upstream(
            "credentials_profile = \"base\"\ncredentials_file = \"\(credentials)\"")
        let base = try #require(loaded(plain, environment: ["AWS_CONFIG_FILE": config])?.upstreams["store"])
        #expect(base.refreshingCredentials == nil && base.credentials.accessKeyID == "AKIDBASE")
        let broken = try directory.write("broken", "[profile app]\nrole_arn = arn:aws:iam::123456789012:role/app\n")
        #expect(
            described(errors(text, environment: ["AWS_CONFIG_FILE": broken]))
                == [
                    "4:23: profile 'app': role_arn needs source_profile, credential_source or web_identity_token_file"
                ])
    }

    @Test func aProfileWithCredentialProcess() throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("config", "[default]\ncredential_process = /bin/echo '{}'\n")
        let chain = try #require(Self.chain(["AWS_CONFIG_FILE": config, "HOME": directory.path]))
        #expect(chain.winner == "profile default")
        #expect(chain.selected == .process(CredentialProcessConfig(arguments: ["/bin/echo", "{}"])))
    }

    @Test func thenWebIdentityThenContainerThenInstanceMetadata() throws {
        let empty = ["HOME": "/nonexistent"]
        let web = try #require(
            Self.chain(
                empty.merging(["AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r"]) {
                    $1
                }))
        #expect(web.winner == "web_identity")
        let container = try #require(
            Self.chain(
                empty.merging(["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1/credentials"]) {
                    $1
                }))
        #expect(container.winner == "container")
        #expect(container.steps.map(\.name) == ["environment", "profile default", "web_identity", "container"])
        let imds = try #require(Self.chain(empty))
        #expect(
            imds.winner == "imds"
                && imds.selected == .instanceMetadata(MetadataEndpoint(host: "169.254.169.254", port: 80)))
        let nothing = described(
            errors(Self.text, environment: ["HOME": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"]))
        #expect(nothing.count == 1)
        #expect(
            nothing.first?.hasPrefix("4:21: credential_source = \"chain\": no source in the chain is configured")
                == true)
    }
}
