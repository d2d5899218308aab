import PresigndConfig

/// Decodes the credentials API's request body (`POST /v1/credentials`, issue 22 §3) into an
/// `R2CredentialRequest`:
///
///     {"bucket": "photos", "permission": "object-read-only", "prefixes": ["incoming/"], "objects": [],
///      "ttl": "15m"}
///
/// `ttl` is seconds or a duration string, default 15 minutes. Unknown members are refused, so a misspelt field
/// never silently yields broader keys (a misspelt `prefixes` would mean the whole bucket).
enum R2CredentialRequestJSON {
    static let knownFields: Set<String> = ["bucket", "permission", "prefixes", "objects", "ttl"]
    /// The default lifetime, as `presignd mint`'s.
    static let defaultTTL = 900

    static func decode(_ body: [UInt8]) -> Result<R2CredentialRequest, PresignFailure> {
        let object: JSONObject
        switch PresignRequestJSON.object(body, knownFields: knownFields) {
        case .failure(let failure): return .failure(failure)
        case .success(let parsed): object = parsed
        }
        guard case .string(let bucket)? = object["bucket"], !bucket.isEmpty else {
            return .failure(.invalid("bucket", "bucket is required (a string)"))
        }
        let names = R2Permission.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .string(let text)? = object["permission"], let permission = R2Permission(rawValue: text) else {
            return .failure(.invalid("permission", "permission must be one of \(names)"))
        }
        var lists: [String: [String]] = [:]
        for field in ["prefixes", "objects"] {
            switch object[field] {
            case nil, .null?: lists[field] = []
            case .strings(let values)?: lists[field] = values
            case .string(let value)?: lists[field] = [value]
            default: return .failure(.invalid(field, "\(field) must be an array of strings"))
            }
        }
        let ttl: Int
        switch PresignRequestJSON.seconds(object, "ttl") {
        case .failure(let failure): return .failure(failure)
        case .success(let value): ttl = value ?? defaultTTL
        }
        var request = R2CredentialRequest(bucket: bucket, permission: permission, ttlSeconds: ttl)
        request.prefixes = lists["prefixes"] ?? []
        request.objects = lists["objects"] ?? []
        return .success(request)
    }
}
