import PresigndSigV4

/// Credentials as JSON: the AWS CLI's `credential_process` output, version 1 (`Version` 1, `AccessKeyId`,
/// `SecretAccessKey`, optional `SessionToken` and `Expiration` in RFC 3339; no `Expiration` means the keys do not
/// expire: "Sourcing credentials with an external process", AWS CLI User Guide), and the container and instance
/// metadata endpoints' documents (the same keys with `Token` for the session token, no `Version`).
enum ProcessCredentials {
    /// The two shapes.
    enum Format {
        case process
        case metadata
    }

    /// The credentials in `output`, or why not. Errors name fields, never values: the output holds secrets.
    static func parse(_ output: [UInt8], format: Format = .process) -> Result<FetchedCredentials, CredentialFetchError>
    {
        let object: JSONObject
        do {
            object = try JSONObject.parse(output)
        } catch {
            let at = error.field.map { " (member \($0))" } ?? ""
            return .failure(CredentialFetchError("output is not a JSON object\(at): \(error.message)"))
        }
        if format == .process {
            guard case .number(let version)? = object["Version"], JSONObject.integer(version) == 1 else {
                return .failure(CredentialFetchError("output needs \"Version\": 1"))
            }
        }
        func text(_ name: String, required: Bool) -> Result<String?, CredentialFetchError> {
            switch object[name] {
            case .string(let value)? where !value.isEmpty: return .success(value)
            case nil, .null?: return required ? .failure(CredentialFetchError("output has no \(name)")) : .success(nil)
            default: return .failure(CredentialFetchError("\(name) in the output must be a non-empty string"))
            }
        }
        do throws(CredentialFetchError) {
            guard let keyID = try text("AccessKeyId", required: true).get(),
                let secret = try text("SecretAccessKey", required: true).get()
            else { return .failure(CredentialFetchError("output has no AccessKeyId")) }
            let token = try text(format == .process ? "SessionToken" : "Token", required: false).get()
            var expiresAt: Int? = nil
            if let expiration = try text("Expiration", required: false).get() {
                guard let date = AmzDate(iso8601: expiration) else {
                    return .failure(
                        CredentialFetchError("Expiration must be an RFC 3339 time such as 2026-03-01T00:15:00Z"))
                }
                expiresAt = date.epochSeconds * 1000
            }
            let credentials = Credentials(
                accessKeyID: keyID, secretAccessKey: Secret(secret), sessionToken: token.map(Secret.init))
            return .success(FetchedCredentials(credentials: credentials, expiresAtMilliseconds: expiresAt))
        } catch {
            return .failure(error)
        }
    }
}
