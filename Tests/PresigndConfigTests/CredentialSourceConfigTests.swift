import PresigndConfig
import Testing

/// `credential_source = "container" | "imds"`: configured from the AWS SDKs' environment at load, never fetched.
@Suite struct CredentialSourceConfigTests {
    static let text = CredentialProcessConfigTests.upstream(#"credential_source = "container""#)

    @Test func containerFullURIWithATokenFile() throws {
        let configuration = try #require(
            loaded(
                Self.text,
                environment: [
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1/credentials",
                    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": "/var/run/secrets/pods.eks.amazonaws.com/token",
                ]))
        guard case .container(let config)? = configuration.upstreams["store"]?.refreshingCredentials else {
            Issue.record("not a container source")
            return
        }
        #expect(config.endpoint == MetadataEndpoint(host: "169.254.170.23", port: 80))
        #expect(config.path == "/v1/credentials")
        #expect(config.authorizationTokenFile == "/var/run/secrets/pods.eks.amazonaws.com/token")
        #expect(configuration.upstreams["store"]?.credentials.source == "credential_source")
    }

    @Test func containerRelativeURIGoesToTheECSAgentAndWins() throws {
        let configuration = try #require(
            loaded(
                Self.text,
                environment: [
                    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/abc",
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:9/x",
                    "AWS_CONTAINER_AUTHORIZATION_TOKEN": "tok",
                ]))
        guard case .container(let config)? = configuration.upstreams["store"]?.refreshingCredentials else {
            Issue.record("not a container source")
            return
        }
        #expect(config.endpoint == MetadataEndpoint(host: "169.254.170.2", port: 80))
        #expect(config.path == "/v2/credentials/abc")
        #expect(config.authorizationToken?.exposedValue == "tok")
    }

    @Test(arguments: [
        ([:], "neither AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set"),
        (["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://10.0.0.5/creds"], "must name loopback"),
        (["AWS_CONTAINER_CREDENTIALS_FULL_URI": "ftp://127.0.0.1/creds"], "must be an http:// or https:// URL"),
    ])
    func containerWithoutAUsableEnvironmentIsAnErrorAtTheKey(environment: [String: String], words: String) {
        let found = described(errors(Self.text, environment: environment))
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("4:21: credential_source = \"container\": ") == true)
        #expect(found.first?.contains(words) == true)
    }

    @Test func containerFullURIOverHTTPSTakesAnyHostAndTheCABundle() throws {
        let configuration = try #require(
            loaded(
                Self.text,
                environment: [
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "https://creds.example:8443/v1/credentials?x=1",
                    "AWS_CA_BUNDLE": "/etc/ssl/custom.pem",
                ]))
        guard case .container(let config)? = configuration.upstreams["store"]?.refreshingCredentials else {
            Issue.record("not a container source")
            return
        }
        #expect(
            config.endpoint
                == MetadataEndpoint(host: "creds.example", port: 8443, usesTLS: true, caFile: "/etc/ssl/custom.pem"))
        #expect(config.path == "/v1/credentials?x=1")
    }

    @Test func imdsDefaultsToTheLinkLocalEndpointAndHonoursTheOverride() throws {
        let text = CredentialProcessConfigTests.upstream(#"credential_source = "imds""#)
        let plain = try #require(loaded(text))
        #expect(
            plain.upstreams["store"]?.refreshingCredentials
                == .instanceMetadata(MetadataEndpoint(host: "169.254.169.254", port: 80)))
        let local = try #require(
            loaded(text, environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:1338/"]))
        #expect(
            local.upstreams["store"]?.refreshingCredentials
                == .instanceMetadata(MetadataEndpoint(host: "127.0.0.1", port: 1338)))
        #expect(
            described(errors(text, environment: ["AWS_EC2_METADATA_DISABLED": "true"]))
                == ["4:21: credential_source = \"imds\": AWS_EC2_METADATA_DISABLED=true in presignd's environment"])
    }

    @Test func imdsTimeoutComesFromTheSDKsVariable() throws {
        let text = CredentialProcessConfigTests.upstream(#"credential_source = "imds""#)
        let slow = try #require(loaded(text, environment: ["AWS_METADATA_SERVICE_TIMEOUT": "3"]))
        #expect(
            slow.upstreams["store"]?.refreshingCredentials
                == .instanceMetadata(MetadataEndpoint(host: "169.254.169.254", port: 80, timeoutMilliseconds: 3000)))
        for bad in ["0", "1.5", "61", "soon"] {
            #expect(
                described(errors(text, environment: ["AWS_METADATA_SERVICE_TIMEOUT": bad]))
                    == [
                        "4:21: credential_source = \"imds\": AWS_METADATA_SERVICE_TIMEOUT must be whole seconds "
                            + "from 1 to 60, got '\(bad)'"
                    ])
        }
    }

    @Test func unknownSourcesAndCombinationsAreErrors() {
        #expect(
            described(errors(CredentialProcessConfigTests.upstream(#"credential_source = "sso""#)))
                == [
                    "4:21: invalid credential_source 'sso'; expected one of: \"container\", \"imds\", "
                        + "\"assume_role\", \"web_identity\", \"chain\", \"r2_temporary\""
                ])
        let both = CredentialProcessConfigTests.upstream(
            "credential_source = \"imds\"\ncredential_process = \"/bin/true\"")
        #expect(
            described(errors(both)) == ["5:1: credential_process cannot be combined with credential_source = \"imds\""])
        let keys = CredentialProcessConfigTests.upstream("credential_source = \"imds\"\naccess_key_id = \"A\"")
        #expect(
            described(errors(keys))
                == ["5:1: access_key_id cannot be combined with credential_source = \"imds\""]
        )
    }
}
