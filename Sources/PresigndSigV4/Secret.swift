/// A secret value (secret access key, session token) that never prints itself.
///
/// `description` and `debugDescription` are `<redacted>` so that string interpolation, logging and
/// `dump` cannot leak it (STYLE: "Secrets live in a type whose description is `<redacted>`").
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself. Read it only where it must go on the wire or into a key derivation.
    public let exposedValue: String

    public init(_ value: String) {
        self.exposedValue = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

/// The key pair (and optional session token) a `Signer` signs with.
public struct Credentials: Sendable {
    public var accessKeyID: String
    public var secretAccessKey: Secret
    /// Temporary credentials only; sent as `X-Amz-Security-Token` (SIGV4-S3-RULES §4.2, §7).
    public var sessionToken: Secret?

    public init(accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}
