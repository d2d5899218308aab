import Foundation
import PresigndConfig
import Testing

/// `credential_source = "r2_temporary"`: the parent keys through the static resolver, the lifetime, one bucket
/// per upstream, the scope derived from that bucket; every mistake at `file:line:col`.
@Suite struct R2TemporaryConfigTests {
    /// An `r2` upstream minting from inline parent keys, `extra` lines in its table, then `buckets`.
    static func config(_ extra: String = "", buckets: String = bucket("media")) -> String {
        """
        [upstream.media]
        provider = "r2"
        account_id = "023E105F4ECEF8AD9CA31A8372D0C353"
        access_key_id = "PARENTKEY"
        secret_access_key = "parent-secret"
        credential_source = "r2_temporary"
        \(extra)

        \(buckets)
        """
    }

    static func bucket(_ name: String, upstream: String = "media", _ lines: String = "") -> String {
        "[[bucket]]\nname = \"\(name)\"\nupstream = \"\(upstream)\"\n\(lines)\n"
    }

    static func source(_ text: String, environment: [String: String] = [:]) -> R2TemporaryCredentialConfig? {
        guard
            case .r2Temporary(let config)? = loaded(text, environment: environment)?.upstreams["media"]?
                .refreshingCredentials
        else { return nil }
        return config
    }

    @Test func mintsFromTheParentKeysForTheOneBucketWithTheDefaultLifetime() throws {
        let config = try #require(Self.source(Self.config()))
        #expect(config.parent.accessKeyID == "PARENTKEY")
        #expect(config.parent.secretAccessKey.exposedValue == "parent-secret")
        #expect(config.parent.source == "inline")
        #expect(config.ttlSeconds == 3600)
        #expect(config.accountID == "023e105f4ecef8ad9ca31a8372d0c353")
        #expect(config.audience == "023e105f4ecef8ad9ca31a8372d0c353.r2.cloudflarestorage.com")
        #expect(config.scope == R2CredentialScope(bucket: "media", permission: .objectReadOnly))
        // The upstream's own keys stay a placeholder: only minted keys sign.
        let upstream = try #require(loaded(Self.config())?.upstreams["media"])
        #expect(upstream.credentials.accessKeyID.isEmpty)
        #expect(!String(describing: upstream.refreshingCredentials).contains("parent-secret"))
    }

    @Test func theParentKeysMayComeFromTheEnvironment() throws {
        let text = Self.config().replacingOccurrences(of: "access_key_id = \"PARENTKEY\"\n", with: "")
            .replacingOccurrences(of: "secret_access_key = \"parent-secret\"\n", with: "")
        let config = try #require(
            Self.source(text, environment: ["AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "env-secret"]))
        #expect(config.parent.accessKeyID == "ENVKEY" && config.parent.source == "environment")
    }

    @Test(arguments: [("\"15m\"", 900), ("\"7d\"", 604_800), ("\"1s\"", 1), ("30", 30)])
    func theLifetimeIsOneSecondToSevenDays(written: String, seconds: Int) throws {
        let config = try #require(Self.source(Self.config("r2_temporary_ttl = \(written)")))
        #expect(config.ttlSeconds == seconds)
    }

    @Test(arguments: [
        ("r2_temporary_ttl = \"8d\"", "7:20: 'r2_temporary_ttl' must be from 1s to 7d"),
        ("r2_temporary_ttl = \"0s\"", "7:20: 'r2_temporary_ttl' must be from 1s to 7d"),
        ("session_token = \"tok\"", "7:1: credential_source = \"r2_temporary\" mints from the parent R2 API token's"),
        ("credential_process = \"/bin/true\"", "7:1: credential_process cannot be combined with credential_source"),
        ("role_arn = \"arn:aws:iam::1:role/x\"", "7:1: role_arn is for credential_source = \"assume_role\""),
    ])
    func mistakesInTheUpstreamTableAreReportedAtTheirKey(extra: String, expected: String) {
        let found = described(errors(Self.config(extra)))
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.hasPrefix(expected) == true, "\(found)")
    }

    @Test func theLifetimeKeyNeedsTheR2TemporarySource() {
        let text = minimalUpstream.replacingOccurrences(
            of: "secret_access_key = \"wJalrXUtnFEMI\"",
            with: "secret_access_key = \"wJalrXUtnFEMI\"\nr2_temporary_ttl = \"1h\"")
        #expect(described(errors(text)) == ["6:1: r2_temporary_ttl is for credential_source = \"r2_temporary\""])
    }

    @Test func anS3UpstreamCannotMintR2Keys() {
        let text = """
            [upstream.media]
            provider = "s3"
            region = "eu-west-1"
            access_key_id = "K"
            secret_access_key = "S"
            credential_source = "r2_temporary"

            \(Self.bucket("media"))
            """
        let found = described(errors(text))
        #expect(
            found.count == 1
                && found[0].hasPrefix("6:21: credential_source = \"r2_temporary\" is for provider = \"r2\""))
    }

    @Test func aCustomR2CompatibleEndpointNamesItsAccount() throws {
        let text = """
            [upstream.media]
            provider = "custom"
            endpoint = "http://127.0.0.1:9000"
            account_id = "023e105f4ecef8ad9ca31a8372d0c353"
            access_key_id = "K"
            secret_access_key = "S"
            credential_source = "r2_temporary"

            \(Self.bucket("media"))
            """
        let config = try #require(Self.source(text))
        #expect(config.accountID == "023e105f4ecef8ad9ca31a8372d0c353")
        #expect(config.audience == "127.0.0.1:9000")
        let withoutAccount = text.replacingOccurrences(
            of: "account_id = \"023e105f4ecef8ad9ca31a8372d0c353\"\n", with: "")
        #expect(
            described(errors(withoutAccount)).first?.hasPrefix(
                "6:21: credential_source = \"r2_temporary\" on provider = \"custom\" needs account_id") == true)
        let badAccount = text.replacingOccurrences(of: "023e105f4ecef8ad9ca31a8372d0c353", with: "xyz")
        #expect(described(errors(badAccount)) == ["4:14: account_id must be 32 hexadecimal characters"])
        // Without r2_temporary, account_id stays an r2 key.
        let plain = text.replacingOccurrences(of: "credential_source = \"r2_temporary\"\n", with: "")
        #expect(described(errors(plain)).first?.hasPrefix("4:1: account_id is only for provider = \"r2\"") == true)
    }

    @Test func anUpstreamServingSeveralBucketsIsRefusedAtItsSource() {
        let text = Self.config(buckets: Self.bucket("media") + "\n" + Self.bucket("thumbs"))
        let found = described(errors(text))
        #expect(found.count == 1)
        #expect(
            found.first?.hasPrefix("6:21: credential_source = \"r2_temporary\" scopes the key to one bucket") == true)
        #expect(found.first?.contains("serves 2 (media, thumbs): define one upstream per bucket") == true)
    }

    @Test func anUpstreamServingNoBucketIsRefused() {
        let text =
            Self.config(buckets: Self.bucket("other", upstream: "plain")) + """

                [upstream.plain]
                provider = "custom"
                endpoint = "https://minio.example"
                access_key_id = "K"
                secret_access_key = "S"
                """
        let found = described(errors(text))
        #expect(found.count == 1 && found[0].contains("no [[bucket]] uses upstream 'media'"), "\(found)")
    }

    @Test(arguments: [
        ("access = \"read-only\"", R2Permission.objectReadOnly, [String]()),
        ("access = \"read-write\"", .objectReadWrite, []),
        (
            "access = \"read-write\"\nallowed_prefixes = [\"users/\", \"shared/\"]", .objectReadWrite,
            ["users/", "shared/"]
        ),
        // allowed_methods and denied_actions narrow a read-write bucket to reads.
        ("access = \"read-write\"\nallowed_methods = [\"GET\", \"HEAD\"]", .objectReadOnly, []),
        (
            "access = \"read-write\"\ndenied_actions = [\"s3:Put*\", \"s3:Delete*\", \"s3:AbortMultipartUpload\"]",
            .objectReadOnly, []
        ),
        // allowed_actions granting an object write widens a read-only bucket to writes.
        ("allowed_actions = [\"s3:PutObject\"]", .objectReadWrite, []),
    ])
    func theScopeIsTheNarrowestPresetCoveringTheBucketPolicy(
        lines: String, permission: R2Permission, prefixes: [String]
    ) throws {
        let config = try #require(Self.source(Self.config(buckets: Self.bucket("media", lines))))
        #expect(config.scope == R2CredentialScope(bucket: "media", permission: permission, prefixes: prefixes))
    }

    @Test func bucketConfigurationActionsAreRefusedRatherThanWideningToAnAdminScope() {
        let text = Self.config(
            buckets: Self.bucket("media", "access = \"read-write\"\nallowed_actions = [\"s3:PutBucketCors\"]"))
        let found = described(errors(text))
        #expect(found.count == 1)
        #expect(found.first?.contains("grants bucket configuration actions (s3:PutBucketCORS)") == true, "\(found)")
        #expect(found.first?.contains("admin-* scope") == true)
        // Denied again: nothing beyond objects is granted, so the key is an object scope.
        let denied = Self.config(
            buckets: Self.bucket(
                "media", "allowed_actions = [\"s3:PutBucketCors\"]\ndenied_actions = [\"s3:PutBucketCors\"]"))
        #expect(Self.source(denied)?.scope?.permission == .objectReadOnly)
    }
}
