import PresigndSigV4

/// Resolves an upstream's credentials, in order of precedence: inline keys and `*_file` keys (per key, one or
/// the other), then `credentials_profile` in a shared credentials file, then the `AWS_*` environment.
///
/// Errors point at the key concerned (or the upstream's header when nothing is configured) and never contain a
/// secret value.
struct CredentialResolver {
    let reader: TableReader
    let upstreamName: String
    let environment: [String: String]
    let configPath: String

    static let keys = [
        "access_key_id", "access_key_id_file", "secret_access_key", "secret_access_key_file", "session_token",
        "session_token_file", "credentials_profile", "credentials_file",
    ]

    /// One credential part from the table.
    enum Part {
        case absent
        case failed
        case value(String, fromFile: Bool)
    }

    func resolve() -> UpstreamCredentials? {
        let access = part("access_key_id")
        let secret = part("secret_access_key")
        let token = part("session_token")
        let profile = reader.string("credentials_profile")
        let profileFile = reader.string("credentials_file")
        for item in [access, secret, token] { if case .failed = item { return nil } }
        if profileFile != nil && profile == nil {
            reader.diagnostics.error(
                "credentials_file needs credentials_profile", at: reader.keyPosition("credentials_file"))
            return nil
        }
        switch (access, secret) {
        case (.value(let id, let idFromFile), .value(let key, let keyFromFile)):
            if profile != nil {
                reader.diagnostics.error(
                    "credentials_profile cannot be combined with access_key_id and secret_access_key",
                    at: reader.keyPosition("credentials_profile"))
                return nil
            }
            var sessionToken: Secret?
            var fromFile = [idFromFile, keyFromFile]
            if case .value(let value, let tokenFromFile) = token {
                sessionToken = Secret(value)
                fromFile.append(tokenFromFile)
            }
            let source = fromFile.allSatisfy { $0 } ? "file" : fromFile.contains(true) ? "inline+file" : "inline"
            return UpstreamCredentials(
                accessKeyID: id, secretAccessKey: Secret(key), sessionToken: sessionToken, source: source)
        case (.value, .absent), (.absent, .value):
            let (missing, present) =
                if case .absent = access {
                    ("access_key_id", "secret_access_key")
                } else {
                    ("secret_access_key", "access_key_id")
                }
            reader.diagnostics.error(
                "upstream '\(upstreamName)' sets \(present) but not \(missing) (or \(missing)_file)",
                at: reader.table.position)
            return nil
        default:
            if case .value = token {
                reader.diagnostics.error(
                    "session_token needs access_key_id and secret_access_key in the same table",
                    at: reader.keyPosition(reader.contains("session_token") ? "session_token" : "session_token_file"))
                return nil
            }
        }
        if let profile {
            return resolveProfile(profile, file: profileFile)
        }
        return resolveEnvironment()
    }
}
