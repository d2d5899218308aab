import PresigndSigV4
import Testing

@testable import PresigndProxy

/// The local R2 derivation, stage by stage, against a vector computed independently (Python's `hmac`, `hashlib`
/// and `base64`) from Cloudflare's documented steps: payload, signing input, JWT, secret, session token.
@Suite struct R2CredentialMinterTests {
    static let account = "023e105f4ecef8ad9ca31a8372d0c353"
    static let minter = R2CredentialMinter(
        parent: Credentials(accessKeyID: "example-access-key-id", secretAccessKey: Secret("example-parent-secret")),
        accountID: account, audience: account + ".r2.cloudflarestorage.com")
    static let issuedAt = 1_772_323_200  // 2026-03-01T00:00:00Z

    static var request: R2CredentialRequest {
        var request = R2CredentialRequest(bucket: "my-bucket", permission: .objectReadOnly, ttlSeconds: 900)
        request.prefixes = ["data/"]
        return request
    }

    static let payload =
        #"{"bucket":"my-bucket","scope":"object-read-only","paths":{"prefixPaths":["data/"],"objectPaths":[]},"#
        + #""sub":"023e105f4ecef8ad9ca31a8372d0c353","iss":"example-access-key-id","#
        + #""aud":"023e105f4ecef8ad9ca31a8372d0c353.r2.cloudflarestorage.com","iat":1772323200,"exp":1772324100}"#
    static let signingInput =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJidWNrZXQiOiJteS1idWNrZXQiLCJzY29wZSI6Im9iamVjdC1yZWFkLW9ubHkiLCJw"
        + "YXRocyI6eyJwcmVmaXhQYXRocyI6WyJkYXRhLyJdLCJvYmplY3RQYXRocyI6W119LCJzdWIiOiIwMjNlMTA1ZjRlY2VmOGFkOWNhMzFh"
        + "ODM3MmQwYzM1MyIsImlzcyI6ImV4YW1wbGUtYWNjZXNzLWtleS1pZCIsImF1ZCI6IjAyM2UxMDVmNGVjZWY4YWQ5Y2EzMWE4MzcyZDBj"
        + "MzUzLnIyLmNsb3VkZmxhcmVzdG9yYWdlLmNvbSIsImlhdCI6MTc3MjMyMzIwMCwiZXhwIjoxNzcyMzI0MTAwfQ"
    static let jwt = signingInput + ".qu1xcxQfm-_YQOTgps-rJ9Y3wDpyEOohSYYOzStkbMg"
    static let secret = "4738089fa7f01d2e0696d8a143f4e3e91760fb875c70ff94a338110685194ea6"

    @Test func payloadHasTheDocumentedClaimsInTheExamplesOrder() {
        #expect(Self.minter.payload(Self.request, issuedAt: Self.issuedAt) == Self.payload)
    }

    @Test func jwtIsHS256OverTheBase64URLHeaderAndPayload() throws {
        let jwt = try Self.minter.signedJWT(Self.request, issuedAt: Self.issuedAt)
        #expect(jwt.hasPrefix(Self.signingInput + "."))
        #expect(jwt == Self.jwt)
    }

    @Test func secretIsTheJWTsSHA256AndTokenIsBase64OfJWTSlashJWT() throws {
        let minted = try Self.minter.mint(Self.request, now: Self.issuedAt, endpoint: "https://example")
        #expect(minted.accessKeyID == "example-access-key-id")
        #expect(minted.jwt.exposedValue == Self.jwt)
        #expect(minted.secretAccessKey.exposedValue == Self.secret)
        #expect(minted.sessionToken.exposedValue == Base64.encode(("jwt/" + Self.jwt).utf8))
        #expect(minted.sessionToken.exposedValue.hasPrefix("and0L2V5SmhiR2NpT2lKSVV6STFOaUlzSW5SNWNDSTZJa3BYVkNKOS5"))
        #expect(minted.issuedAt == Self.issuedAt)
        #expect(minted.expiresAt == Self.issuedAt + 900)
    }

    @Test func payloadOmitsPathsWhenUnscopedAndEscapesStrings() {
        var request = R2CredentialRequest(bucket: "b", permission: .adminReadWrite, ttlSeconds: 60)
        #expect(
            Self.minter.payload(request, issuedAt: 10).hasPrefix(#"{"bucket":"b","scope":"admin-read-write","sub":"#))
        request.objects = ["a \"quoted\" key"]
        #expect(
            Self.minter.payload(request, issuedAt: 10).contains(
                #""paths":{"prefixPaths":[],"objectPaths":["a \"quoted\" key"]}"#))
    }

    @Test func mintedSecretsDoNotPrintThemselves() throws {
        let minted = try Self.minter.mint(Self.request, now: Self.issuedAt, endpoint: "https://example")
        #expect("\(minted)".contains(Self.secret) == false)
        #expect("\(minted)".contains("jwt") == true)  // the field name, not its value
        #expect("\(minted)".contains(Self.jwt) == false)
    }
}
