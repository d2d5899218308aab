/// The stand-in values of presignd's example configuration, README and the AWS documentation: a configuration
/// that still holds one loads (the example runs as-is), but warns, because every request would fail upstream.
/// The SigV4 test suite's own keys (`AKIDEXAMPLE`) are not among them: tests sign with those on purpose.
enum Placeholders {
    /// `config/presignd.example.toml`, `config/presignd.toml` and the README write this account id.
    static let accountIDs: Set<String> = ["0123456789abcdef0123456789abcdef", "00000000000000000000000000000000"]
    static let accessKeyIDs: Set<String> = ["EXAMPLEACCESSKEYID", "YOUR_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"]
    static let secretAccessKeys: Set<String> = [
        "example-secret-access-key", "YOUR_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ]

    static func isAccountID(_ id: String) -> Bool { accountIDs.contains(id.lowercased()) }

    /// A listed value, or text cut short in the documentation (`4f0c2d…`).
    static func isAccessKeyID(_ id: String) -> Bool { accessKeyIDs.contains(id) || isElided(id) }

    static func isSecretAccessKey(_ key: String) -> Bool { secretAccessKeys.contains(key) || isElided(key) }

    private static func isElided(_ text: String) -> Bool { text.contains("…") || text.hasSuffix("...") }

    /// The warnings for one upstream's table: which value is a placeholder, what fails because of it, what to set.
    static func warn(upstream name: String, credentials: UpstreamCredentials, reader: TableReader) {
        let diagnostics = reader.diagnostics
        if let account = reader.string("account_id"), isAccountID(account.value) {
            diagnostics.warning(
                "account_id of upstream '\(name)' is the example's placeholder: requests will fail with "
                    + "UpstreamDNSFailure until it is your Cloudflare account id (dashboard → R2 → Account ID, "
                    + "32 hex characters)", at: account.position)
        }
        let fromEnvironment = credentials.source == "environment"
        if isAccessKeyID(credentials.accessKeyID) {
            let what = fromEnvironment ? "AWS_ACCESS_KEY_ID in the environment" : "access_key_id"
            diagnostics.warning(
                "\(what) of upstream '\(name)' is a placeholder from the documentation: the upstream will refuse "
                    + "every request (InvalidAccessKeyId) until it is a real key id (for R2: dashboard → R2 → "
                    + "Manage API tokens)", at: position(of: "access_key_id", reader))
        }
        if isSecretAccessKey(credentials.secretAccessKey.exposedValue) {
            let what = fromEnvironment ? "AWS_SECRET_ACCESS_KEY in the environment" : "secret_access_key"
            diagnostics.warning(
                "\(what) of upstream '\(name)' is a placeholder from the documentation: the upstream will refuse "
                    + "every request (SignatureDoesNotMatch) until it is the secret of the key id",
                at: position(of: "secret_access_key", reader))
        }
    }

    /// The key's own line, or its `_file` variant's, or the table header (environment, profile).
    private static func position(of key: String, _ reader: TableReader) -> SourcePosition {
        if reader.contains(key) { return reader.keyPosition(key) }
        if reader.contains(key + "_file") { return reader.keyPosition(key + "_file") }
        return reader.table.position
    }
}
