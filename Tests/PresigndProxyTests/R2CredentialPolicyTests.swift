import PresigndConfig
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// What presignd refuses to mint: scopes wider than the bucket's own policy, lifetimes over 7 days.
@Suite struct R2CredentialPolicyTests {
    static let text = """
        [upstream.r2]
        provider = "r2"
        account_id = "023e105f4ecef8ad9ca31a8372d0c353"
        access_key_id = "PARENTKEY"
        secret_access_key = "parent-secret"

        [upstream.minio]
        provider = "custom"
        endpoint = "https://minio.example"
        access_key_id = "K"
        secret_access_key = "S"

        [[bucket]]
        name = "open"
        upstream = "r2"
        access = "read-write"

        [[bucket]]
        name = "archive"
        upstream = "r2"

        [[bucket]]
        name = "uploads"
        upstream = "r2"
        access = "read-write"
        allowed_prefixes = ["users/", "shared/"]

        [[bucket]]
        name = "getonly"
        upstream = "r2"
        access = "read-write"
        allowed_methods = ["GET", "HEAD", "PUT"]

        [[bucket]]
        name = "local"
        upstream = "minio"
        """

    static func configuration() throws -> Configuration {
        try ConfigLoader.parse(text: text, path: "test.toml", environment: [:]).get()
    }

    static func request(
        _ bucket: String, _ permission: R2Permission, prefixes: [String] = [], objects: [String] = [], ttl: Int = 900
    ) -> R2CredentialRequest {
        var request = R2CredentialRequest(bucket: bucket, permission: permission, ttlSeconds: ttl)
        request.prefixes = prefixes
        request.objects = objects
        return request
    }

    func refusal(_ request: R2CredentialRequest) throws -> PresignFailure? {
        if case .failure(let failure) = R2CredentialPolicy.minter(for: request, configuration: try Self.configuration())
        {
            return failure
        }
        return nil
    }

    @Test func minterTakesTheUpstreamKeysAccountAndHost() throws {
        let minter = try R2CredentialPolicy.minter(
            for: Self.request("open", .adminReadWrite), configuration: try Self.configuration()
        ).get()
        #expect(minter.parent.accessKeyID == "PARENTKEY")
        #expect(minter.parent.secretAccessKey.exposedValue == "parent-secret")
        #expect(minter.accountID == "023e105f4ecef8ad9ca31a8372d0c353")
        #expect(minter.audience == "023e105f4ecef8ad9ca31a8372d0c353.r2.cloudflarestorage.com")
    }

    @Test func readOnlyBucketCannotMintWriteKeys() throws {
        #expect(try refusal(Self.request("archive", .objectReadOnly)) == nil)
        #expect(try refusal(Self.request("archive", .adminReadOnly)) == nil)
        for permission in [R2Permission.objectReadWrite, .adminReadWrite] {
            let failure = try #require(try refusal(Self.request("archive", permission)))
            #expect(failure.field == "permission")
            #expect(failure.code == "AccessDenied")
            #expect(failure.message.contains("read-only"))
        }
    }

    @Test func allowedMethodsWithoutDeleteCannotMintWriteKeys() throws {
        #expect(try refusal(Self.request("getonly", .objectReadOnly)) == nil)
        let failure = try #require(try refusal(Self.request("getonly", .objectReadWrite)))
        #expect(failure.message.contains("method POST is not allowed"))
    }

    @Test func prefixesMustLieInsideAllowedPrefixes() throws {
        #expect(try refusal(Self.request("uploads", .objectReadWrite, prefixes: ["users/42/"])) == nil)
        #expect(try refusal(Self.request("uploads", .objectReadOnly, objects: ["shared/manifest.json"])) == nil)
        let outside = try #require(try refusal(Self.request("uploads", .objectReadWrite, prefixes: ["admin/"])))
        #expect(outside.field == "prefixes")
        #expect(outside.message.contains("'admin/' is outside allowed_prefixes"))
        let wider = try #require(try refusal(Self.request("uploads", .objectReadWrite, prefixes: ["user"])))
        #expect(wider.field == "prefixes")
        let object = try #require(try refusal(Self.request("uploads", .objectReadOnly, objects: ["other.txt"])))
        #expect(object.field == "objects")
        let unscoped = try #require(try refusal(Self.request("uploads", .objectReadOnly)))
        #expect(unscoped.message.contains("name prefixes or objects inside them"))
    }

    @Test func adminScopesNeedABucketWithoutAllowedPrefixes() throws {
        let failure = try #require(try refusal(Self.request("uploads", .adminReadOnly, prefixes: ["users/"])))
        #expect(failure.field == "permission")
        #expect(failure.message.contains("bucket configuration"))
    }

    @Test(arguments: [0, -1, 604_801])
    func lifetimesOutsideOneSecondToSevenDaysAreRefused(ttl: Int) throws {
        let failure = try #require(try refusal(Self.request("open", .objectReadOnly, ttl: ttl)))
        #expect(failure.field == "ttl")
        #expect(failure.code == "InvalidArgument")
    }

    @Test func sevenDaysExactlyIsAccepted() throws {
        #expect(try refusal(Self.request("open", .objectReadOnly, ttl: 604_800)) == nil)
    }

    @Test func onlyConfiguredR2BucketsMint() throws {
        #expect(try refusal(Self.request("nope", .objectReadOnly))?.code == "NoSuchBucket")
        #expect(try refusal(Self.request("local", .objectReadOnly))?.message.contains("not on an R2 upstream") == true)
    }

    @Test func emptyPrefixesAndObjectsAreRefused() throws {
        #expect(try refusal(Self.request("open", .objectReadOnly, prefixes: [""]))?.field == "prefixes")
        #expect(try refusal(Self.request("open", .objectReadOnly, objects: [""]))?.field == "objects")
    }
}
