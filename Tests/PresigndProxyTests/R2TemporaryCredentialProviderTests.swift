import PresigndConfig
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// `credential_source = "r2_temporary"`: each fetch mints the configured scope from the parent keys, checked
/// against `R2CredentialMinterTests`' independently computed vector, and the refresh schedule it leads to.
@Suite struct R2TemporaryCredentialProviderTests {
    static var config: R2TemporaryCredentialConfig {
        var config = R2TemporaryCredentialConfig(
            parent: UpstreamCredentials(
                accessKeyID: "example-access-key-id", secretAccessKey: Secret("example-parent-secret"),
                source: "inline"),
            accountID: R2CredentialMinterTests.account,
            audience: R2CredentialMinterTests.account + ".r2.cloudflarestorage.com")
        config.ttlSeconds = 900
        config.scope = R2CredentialScope(bucket: "my-bucket", permission: .objectReadOnly, prefixes: ["data/"])
        return config
    }

    @Test func aFetchMintsTheScopedKeyWithItsSessionTokenAndExpiry() throws {
        let provider = R2TemporaryCredentialProvider(config: Self.config)
        #expect(provider.kind == "r2_temporary")
        let fetched = try provider.mint(now: R2CredentialMinterTests.issuedAt).get()
        #expect(fetched.credentials.accessKeyID == "example-access-key-id")
        #expect(fetched.credentials.secretAccessKey.exposedValue == R2CredentialMinterTests.secret)
        #expect(
            fetched.credentials.sessionToken?.exposedValue
                == Base64.encode(("jwt/" + R2CredentialMinterTests.jwt).utf8))
        #expect(fetched.expiresAtMilliseconds == (R2CredentialMinterTests.issuedAt + 900) * 1000)
        #expect(fetched.keyHint == "…y-id")
    }

    @Test func eachMintIsANewKeyIssuedAtItsOwnTime() throws {
        let provider = R2TemporaryCredentialProvider(config: Self.config)
        let first = try provider.mint(now: 1_000_000).get()
        let second = try provider.mint(now: 1_000_450).get()
        #expect(first.credentials.secretAccessKey.exposedValue != second.credentials.secretAccessKey.exposedValue)
        #expect(second.expiresAtMilliseconds == 1_000_450_000 + 900_000)
    }

    @Test func withoutAScopeNothingIsMinted() {
        var config = Self.config
        config.scope = nil
        guard case .failure(let error) = R2TemporaryCredentialProvider(config: config).mint(now: 1) else {
            Issue.record("minted without a scope")
            return
        }
        #expect(error.message.contains("no bucket"))
    }

    @Test func shortLivedKeysAreMintedAgainHalfwayAndNeverLapse() throws {
        // A 4-second key, as the e2e test runs it: each refresh is scheduled at half the lifetime left, so the
        // next key is published while the current one has 2 s to go.
        var config = Self.config
        config.ttlSeconds = 4
        let provider = R2TemporaryCredentialProvider(config: config)
        var machine = CredentialRefreshStateMachine()
        #expect(machine.start().count == 1)
        var now = 1_000_000_000
        for _ in 0..<3 {
            let fetched = try provider.mint(now: now / 1000).get()
            let actions = machine.fetchSucceeded(fetched, nowMilliseconds: now, jitter: 0.5)
            guard actions.count == 2, case .publish = actions[0], case .schedule(let at) = actions[1] else {
                Issue.record("unexpected actions \(actions)")
                return
            }
            #expect(at == now + 2000)
            #expect(machine.isValid(atMilliseconds: at))
            now = at
            let fired = machine.timerFired(nowMilliseconds: now)
            guard fired.count == 1, case .fetch = fired[0] else {
                Issue.record("the refresh did not fetch: \(fired)")
                return
            }
        }
    }

    @Test func theCommandLineMintsForEveryR2TemporaryUpstream() throws {
        let text = """
            [upstream.media]
            provider = "r2"
            account_id = "\(R2CredentialMinterTests.account)"
            access_key_id = "PARENTKEY"
            secret_access_key = "parent-secret"
            credential_source = "r2_temporary"

            [[bucket]]
            name = "media"
            upstream = "media"
            """
        let configuration = try ConfigLoader.parse(text: text, path: "t.toml", environment: [:]).get()
        let service = try PresignService(configuration: configuration)
        #expect(try service.mintLocalCredentials(configuration, now: 1_000_000).get() == ())
        guard case .valid(let credentials, let expiry)? = service.fetchedCredentials["media"] else {
            Issue.record("nothing minted")
            return
        }
        #expect(credentials.accessKeyID == "PARENTKEY" && credentials.sessionToken != nil)
        #expect(expiry == (1_000_000 + 3600) * 1000)
        // A link never outlives the key it carries: its expiry is capped at the key's, and says so.
        let date = AmzDate(epochSeconds: 1_000_000 + 600)
        var link = PresignRequest(bucket: "media", key: "a.txt", method: "GET")
        link.expires = 7200
        let capped = try service.presign(link, date: date).get()
        #expect(capped.expiresIn == 3000 && capped.expiresAt == 1_000_000 + 3600)
        #expect(capped.url.contains("X-Amz-Expires=3000&") && capped.url.contains("X-Amz-Security-Token="))
        link.expires = 60
        #expect(try service.presign(link, date: date).get().expiresIn == 60)
        // The parent's long-lived keys still mint scoped keys for apps (`presignd mint`).
        let request = R2CredentialRequest(bucket: "media", permission: .objectReadOnly, ttlSeconds: 60)
        let minted = try R2CredentialPolicy.mint(request, configuration: configuration, now: 1_000_000).get()
        #expect(minted.accessKeyID == "PARENTKEY")
    }
}
