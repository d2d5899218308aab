import PresigndSigV4

/// Credentials a provider delivered, and until when they work.
struct FetchedCredentials: Sendable {
    var credentials: Credentials
    /// Wall-clock expiry, epoch milliseconds; nil for credentials that do not expire.
    var expiresAtMilliseconds: Int?

    /// The key id's last four characters, for logs (`…WXYZ`): enough to tell keys apart, never the key.
    var keyHint: String { "…" + String(credentials.accessKeyID.suffix(4)) }
}

/// Why a provider delivered nothing; the message is for logs and 503 bodies, so it never holds a secret or the
/// provider's output.
public struct CredentialFetchError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}
