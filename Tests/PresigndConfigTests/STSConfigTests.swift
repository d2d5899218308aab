import PresigndConfig
import PresigndTestSupport
import Testing

/// `credential_source = "assume_role" | "web_identity"`: the role, the STS endpoint and the source of the keys
/// that sign the call, read at load and never fetched.
@Suite struct STSConfigTests {
    static func upstream(_ lines: String) -> String { CredentialProcessConfigTests.upstream(lines) }
    static let role = "arn:aws:iam::123456789012:role/reader"

    static func assumeRole(_ configuration: Configuration?) -> AssumeRoleConfig? {
        guard case .assumeRole(let config)? = configuration?.upstreams["store"]?.refreshingCredentials else {
            return nil
        }
        return config
    }

    @Test func assumeRoleWithTheTablesKeysAndEveryOption() throws {
        let text = Self.upstream(
            """
            credential_source = "assume_role"
            role_arn = "\(Self.role)"
            role_session_name = "proxy@host"
            external_id = "ext-123"
            duration = "2h"
            access_key_id = "AKIDSOURCE"
            secret_access_key = "source-secret"
            sts_region = "eu-west-1"
            """)
        let config = try #require(Self.assumeRole(loaded(text)))
        #expect(config.roleARN == Self.role)
        #expect(config.sessionName == "proxy@host")
        #expect(config.externalID?.exposedValue == "ext-123")
        #expect(config.durationSeconds == 7200)
        #expect(config.sts.endpoint == Endpoint(scheme: .https, host: "sts.eu-west-1.amazonaws.com"))
        #expect(config.sts.region == "eu-west-1")
        guard case .staticKeys(let keys) = config.source else {
            Issue.record("the source is not the table's keys")
            return
        }
        #expect(keys.accessKeyID == "AKIDSOURCE" && keys.source == "inline")
    }

    @Test func defaultsFollowTheSDKs() throws {
        let text = Self.upstream(
            "credential_source = \"assume_role\"\nrole_arn = \"\(Self.role)\"\nsource = \"imds\"")
        let config = try #require(
            Self.assumeRole(
                loaded(text, environment: ["AWS_REGION": "ap-south-1", "AWS_CA_BUNDLE": "/etc/custom-ca.pem"])))
        #expect(config.sessionName == "presignd" && config.durationSeconds == 3600 && config.externalID == nil)
        #expect(config.sts.endpoint.host == "sts.ap-south-1.amazonaws.com" && config.sts.region == "ap-south-1")
        #expect(config.sts.caFile == "/etc/custom-ca.pem")
        #expect(config.source == .instanceMetadata(MetadataEndpoint(host: "169.254.169.254", port: 80)))
        let pinned = try #require(
            Self.assumeRole(
                loaded(
                    Self.upstream(
                        "credential_source = \"assume_role\"\nrole_arn = \"\(Self.role)\"\nsource = \"imds\"\n"
                            + "sts_endpoint = \"https://sts.internal.example:8443/\""),
                    environment: ["AWS_ENDPOINT_URL_STS": "https://ignored.example"])))
        #expect(pinned.sts.endpoint == Endpoint(scheme: .https, host: "sts.internal.example", port: 8443))
    }

    @Test func anS3UpstreamsRegionIsTheSTSRegion() throws {
        let text = """
            [upstream.store]
            provider = "s3"
            region = "eu-central-1"
            credential_source = "assume_role"
            role_arn = "\(Self.role)"
            source = "container"

            [[bucket]]
            name = "data"
            upstream = "store"
            """
        let config = try #require(
            Self.assumeRole(loaded(text, environment: ["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/creds"])))
        #expect(config.sts.region == "eu-central-1" && config.sts.endpoint.host == "sts.eu-central-1.amazonaws.com")
        guard case .container = config.source else {
            Issue.record("the source is not the container endpoint")
            return
        }
    }

    @Test(arguments: [
        (
            "credential_source = \"assume_role\"\naccess_key_id = \"A\"\nsecret_access_key = \"B\"",
            "4:1: credential_source = \"assume_role\" needs role_arn"
        ),
        (
            "credential_source = \"assume_role\"\nrole_arn = \"role/reader\"",
            "5:12: role_arn 'role/reader' is not a role ARN (arn:aws:iam::ACCOUNT:role/NAME)"
        ),
        (
            "credential_source = \"assume_role\"\nrole_arn = \"\(role)\"\nsource = \"imds\"\nduration = \"5m\"",
            "7:12: 'duration' must be from 15m to 12h"
        ),
        (
            "credential_source = \"assume_role\"\nrole_arn = \"\(role)\"\nsource = \"imds\"\naccess_key_id = \"A\"",
            "7:1: access_key_id cannot be combined with credential_source = \"assume_role\" and source = \"imds\""
        ),
        (
            "credential_source = \"assume_role\"\nrole_arn = \"\(role)\"\nsource = \"sso\"",
            "6:10: invalid source 'sso'; expected one of: \"keys\", \"credential_process\", \"container\", \"imds\", "
                + "\"web_identity\", \"chain\""
        ),
        (
            "access_key_id = \"A\"\nsecret_access_key = \"B\"\nrole_arn = \"\(role)\"",
            "6:1: role_arn needs credential_source (\"assume_role\", \"web_identity\", …)"
        ),
        (
            "credential_source = \"imds\"\nrole_arn = \"\(role)\"",
            "5:1: role_arn is for credential_source = \"assume_role\" or \"web_identity\""
        ),
        (
            "credential_source = \"assume_role\"\nrole_arn = \"\(role)\"\nsource = \"imds\"\nrole_session_name = \"a b\"",
            "7:21: role_session_name must be 2 to 64 characters of letters, digits and _+=,.@-"
        ),
    ])
    func mistakesAreErrorsAtTheirKey(lines: String, expected: String) {
        #expect(described(errors(Self.upstream(lines))) == [expected])
    }

    @Test func webIdentityFromTheIRSAEnvironmentOrTheTable() throws {
        let irsa = [
            "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/secrets/eks.amazonaws.com/serviceaccount/token",
            "AWS_ROLE_ARN": Self.role, "AWS_ROLE_SESSION_NAME": "pod-1",
        ]
        let fromEnvironment = try #require(
            loaded(Self.upstream("credential_source = \"web_identity\""), environment: irsa))
        guard case .webIdentity(let config)? = fromEnvironment.upstreams["store"]?.refreshingCredentials else {
            Issue.record("not web identity")
            return
        }
        #expect(config.tokenFile == irsa["AWS_WEB_IDENTITY_TOKEN_FILE"])
        #expect(config.roleARN == Self.role && config.sessionName == "pod-1" && config.durationSeconds == 3600)
        let table = Self.upstream(
            "credential_source = \"web_identity\"\nweb_identity_token_file = \"/t\"\nrole_arn = \"\(Self.role)\"")
        guard case .webIdentity(let written)? = loaded(table)?.upstreams["store"]?.refreshingCredentials else {
            Issue.record("not web identity")
            return
        }
        #expect(written.tokenFile == "/t" && written.sessionName == "presignd")
        #expect(
            described(errors(Self.upstream("credential_source = \"web_identity\"")))
                == [
                    "4:21: credential_source = \"web_identity\" needs web_identity_token_file, or "
                        + "AWS_WEB_IDENTITY_TOKEN_FILE in presignd's environment (EKS IRSA sets it)"
                ])
    }
}
