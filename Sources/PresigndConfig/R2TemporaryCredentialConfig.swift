import PresigndSigV4

/// The preset scopes of an R2 temporary credential (Cloudflare, "Temporary credentials", "Scope").
public enum R2Permission: String, Sendable, Hashable, CaseIterable {
    /// Read and list objects.
    case objectReadOnly = "object-read-only"
    /// Read, write and list objects.
    case objectReadWrite = "object-read-write"
    /// Read and list objects, view bucket configuration.
    case adminReadOnly = "admin-read-only"
    /// Read, write and list objects, edit bucket configuration.
    case adminReadWrite = "admin-read-write"

    /// Whether the scope allows writes (PUT, POST, DELETE).
    public var writes: Bool { self == .objectReadWrite || self == .adminReadWrite }
    /// Whether the scope reaches bucket configuration, not only objects.
    public var isAdmin: Bool { self == .adminReadOnly || self == .adminReadWrite }
    /// The HTTP methods the scope lets a client send through an S3 API.
    public var methods: [String] { writes ? ["GET", "HEAD", "PUT", "POST", "DELETE"] : ["GET", "HEAD"] }
}

/// What an upstream's minted key may reach: derived from the one bucket the configuration maps to the upstream
/// (`R2CredentialScope.derive`), never written by hand.
public struct R2CredentialScope: Sendable, Hashable, CustomStringConvertible {
    /// The bucket's name at R2 (the JWT's `bucket`).
    public var bucket: String
    public var permission: R2Permission
    /// The bucket's `allowed_prefixes` (`paths.prefixPaths`); empty: the whole bucket.
    public var prefixes: [String]

    public init(bucket: String, permission: R2Permission, prefixes: [String] = []) {
        self.bucket = bucket
        self.permission = permission
        self.prefixes = prefixes
    }

    public var description: String {
        "bucket \(bucket), \(permission.rawValue)"
            + (prefixes.isEmpty ? "" : ", prefixes " + prefixes.joined(separator: " "))
    }
}

/// `credential_source = "r2_temporary"`: presignd mints R2 temporary credentials locally from a parent R2 API
/// token's keys (Cloudflare's "Generate locally (client-side signing)") and refreshes them before they expire.
public struct R2TemporaryCredentialConfig: Sendable, Hashable {
    /// The parent API token's long-lived keys (inline, `*_file`, a profile or the environment).
    public var parent: UpstreamCredentials
    /// `r2_temporary_ttl`: each minted key's lifetime. Default 1 hour, 1 second to 7 days.
    public var ttlSeconds: Int = R2TemporaryCredentialConfig.defaultTTLSeconds
    /// The Cloudflare account id (the JWT's `sub`).
    public var accountID: String
    /// The endpoint's host (the JWT's `aud`), with a port only when not the scheme's default.
    public var audience: String
    /// Derived from the upstream's bucket once every bucket is read; nil only while loading.
    public var scope: R2CredentialScope?

    public static let defaultTTLSeconds = 3600
    /// Seven days, Cloudflare's maximum `ttlSeconds`.
    public static let maximumTTLSeconds = 604_800

    public init(parent: UpstreamCredentials, accountID: String, audience: String) {
        self.parent = parent
        self.accountID = accountID
        self.audience = audience
    }

    /// For logs and `check-config`: the scope and lifetime, the parent's key source; never a key.
    public var description: String {
        "r2_temporary (\(scope.map(\.description) ?? "no bucket"), ttl \(ConfigDuration.seconds(ttlSeconds))) "
            + "minted from the parent keys from \(parent.source)"
    }
}
