/// A secret value (secret access key, session token) that never prints itself: the one secret type, from the
/// configuration that reads it to the signer that uses it.
///
/// `description` and `debugDescription` are `<redacted>` and the mirror has no children, so that string
/// interpolation, logging, `dump` and debuggers cannot leak it (STYLE: "Secrets live in a type whose description
/// is `<redacted>`").
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself. Read it only where it must go on the wire or into a key derivation.
    public let exposedValue: String

    public init(_ value: String) {
        self.exposedValue = value
    }

    public var isEmpty: Bool { exposedValue.isEmpty }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
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
