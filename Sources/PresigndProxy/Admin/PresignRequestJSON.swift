import PresigndConfig

/// Decodes the presign API's request body (issue 7) into a `PresignRequest`:
///
///     {"bucket": "photos", "key": "cat.jpg", "method": "GET", "expires": 3600,
///      "response_content_disposition": "attachment; filename=cat.jpg", "content_type": "image/jpeg"}
///
/// `expires` is seconds (a number) or a duration string (`"15m"`, `"1h"`). Unknown members are refused, so a
/// misspelt option never silently yields a broader link.
enum PresignRequestJSON {
    static let stringFields = Set(
        ["bucket", "key", "method", "content_type", "version_id"]
            + PresignService.responseOverrideNames.map(PresignService.fieldName(query:)))
    static let knownFields: Set<String> = stringFields.union(["expires", "content_length"])

    /// An API body as a JSON object with only `knownFields` (a misspelt option must not silently broaden what is
    /// granted), or the refusal naming the field.
    static func object(_ body: [UInt8], knownFields: Set<String>) -> Result<JSONObject, PresignFailure> {
        let object: JSONObject
        do {
            object = try JSONObject.parse(body)
        } catch {
            return .failure(
                PresignFailure(
                    status: 400, code: "MalformedJSON", field: error.field ?? "", message: error.message))
        }
        for name in object.names where !knownFields.contains(name) {
            return .failure(.invalid(name, "unknown field '\(name)'"))
        }
        return .success(object)
    }

    static func decode(_ body: [UInt8]) -> Result<PresignRequest, PresignFailure> {
        let object: JSONObject
        switch Self.object(body, knownFields: knownFields) {
        case .failure(let failure): return .failure(failure)
        case .success(let parsed): object = parsed
        }
        var strings: [String: String] = [:]
        for name in stringFields {
            switch object[name] {
            case nil, .null?: continue
            case .string(let value)?: strings[name] = value
            default: return .failure(.invalid(name, "\(name) must be a string"))
            }
        }
        var request = PresignRequest(bucket: strings["bucket"] ?? "", key: strings["key"] ?? "")
        if let method = strings["method"] { request.method = method }
        request.contentType = strings["content_type"]
        request.versionID = strings["version_id"]
        for name in PresignService.responseOverrideNames {
            if let value = strings[PresignService.fieldName(query: name)] {
                request.responseOverrides.append((name, value))
            }
        }
        switch seconds(object, "expires") {
        case .failure(let failure): return .failure(failure)
        case .success(let value): request.expires = value
        }
        switch object["content_length"] {
        case nil, .null?: break
        case .number(let text)?:
            guard let length = JSONObject.integer(text) else {
                return .failure(.invalid("content_length", "content_length must be a whole number of bytes"))
            }
            request.contentLength = length
        default:
            return .failure(.invalid("content_length", "content_length must be a number"))
        }
        return .success(request)
    }

    /// A lifetime member (`expires`, `ttl`): a number of seconds or a duration string; nil when absent.
    static func seconds(_ object: JSONObject, _ field: String) -> Result<Int?, PresignFailure> {
        switch object[field] {
        case nil, .null?: return .success(nil)
        case .number(let text)?:
            guard let seconds = JSONObject.integer(text) else {
                return .failure(.invalid(field, "\(field) must be a whole number of seconds"))
            }
            return .success(seconds)
        case .string(let text)?:
            guard let seconds = parseDuration(text) else {
                return .failure(.invalid(field, "\(field) must be seconds or a duration such as \"15m\""))
            }
            return .success(seconds)
        case .bool?, .strings?:
            return .failure(.invalid(field, "\(field) must be a number of seconds"))
        }
    }

    /// `3600`, `"3600"`, `"30s"`, `"15m"`, `"1h30m"`, `"7d"` → whole seconds.
    static func parseDuration(_ text: String) -> Int? {
        if let seconds = JSONObject.integer(text) { return seconds }
        guard let duration = ConfigDuration(parsing: text), duration.milliseconds % 1000 == 0 else { return nil }
        return duration.seconds
    }
}
