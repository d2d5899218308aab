import PresigndConfig
import PresigndSigV4

/// What a temporary credential is for: one bucket, one permission, optional paths, a lifetime.
public struct R2CredentialRequest: Sendable, Equatable {
    public var bucket: String
    public var permission: R2Permission
    /// `paths.prefixPaths`: keys starting with any of these.
    public var prefixes: [String] = []
    /// `paths.objectPaths`: exact keys.
    public var objects: [String] = []
    /// Lifetime in seconds, 1 to 604800 (7 days, the API's `ttlSeconds` maximum).
    public var ttlSeconds: Int

    public init(bucket: String, permission: R2Permission, ttlSeconds: Int) {
        self.bucket = bucket
        self.permission = permission
        self.ttlSeconds = ttlSeconds
    }

    /// Seven days, Cloudflare's maximum `ttlSeconds`.
    public static let maximumTTL = 604_800
}

/// A minted credential: what an S3 client needs, and when it stops working.
public struct R2TemporaryCredentials: Sendable {
    /// The parent's access key id, reused (Cloudflare: "The parent access key ID is reused").
    public var accessKeyID: String
    /// Hex SHA-256 of the signed JWT.
    public var secretAccessKey: Secret
    /// `base64("jwt/" + JWT)`, sent as `X-Amz-Security-Token`.
    public var sessionToken: Secret
    /// The JWT itself (its claims are not secret, but it is the token's body: treat it as one).
    public var jwt: Secret
    /// `iat` and `exp`, epoch seconds.
    public var issuedAt: Int
    public var expiresAt: Int
    /// The R2 endpoint the credential is for (`https://ACCOUNT.r2.cloudflarestorage.com`).
    public var endpoint: String
}
