import PresigndSigV4

/// The keys presignd signs an upstream's requests with, resolved when the configuration loads.
public struct UpstreamCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The access key id is not secret (it appears in every `Authorization` header), but is kept out of logs anyway.
    public var accessKeyID: String
    public var secretAccessKey: Secret
    /// For temporary credentials (STS); nil for long-lived keys.
    public var sessionToken: Secret?
    /// Where the keys came from, for logs and `check-config`: `"inline"`, `"file"`, `"inline+file"`,
    /// `"profile NAME"` or `"environment"`.
    public var source: String

    public init(accessKeyID: String, secretAccessKey: Secret, sessionToken: Secret? = nil, source: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
    }

    /// Names only the source: `credentials from inline`.
    public var description: String { "credentials from \(source)" }

    /// The keys as the signer takes them.
    public var signing: Credentials {
        Credentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken)
    }
}
