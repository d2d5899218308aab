import PresigndSigV4

/// The keys `assume_role` and `web_identity` share: the role, the session, and where STS is.
extension RefreshingCredentialSource {
    /// `role_arn` (or `AWS_ROLE_ARN` when not required in the table), `role_session_name`, `duration`.
    static func decodeRole(reader: TableReader, context: DecodingContext, requiresARN: Bool) -> (
        arn: String, sessionName: String, durationSeconds: Int
    )? {
        let diagnostics = reader.diagnostics
        let written = reader.string("role_arn")
        if requiresARN && written == nil {
            if !reader.contains("role_arn") {
                diagnostics.error(
                    "credential_source = \"assume_role\" needs role_arn", at: reader.keyPosition("credential_source"))
            }
            return nil
        }
        let arn = written?.value ?? nonEmpty(context.environment["AWS_ROLE_ARN"]) ?? ""
        if !arn.isEmpty && !STSEndpoint.isRoleARN(arn) {
            diagnostics.error(
                "role_arn '\(arn)' is not a role ARN (arn:aws:iam::ACCOUNT:role/NAME)",
                at: written?.position ?? reader.table.position)
            return nil
        }
        let session = reader.string("role_session_name")
        let sessionName =
            session?.value ?? (requiresARN ? nil : nonEmpty(context.environment["AWS_ROLE_SESSION_NAME"]))
            ?? STSEndpoint.defaultSessionName
        guard STSEndpoint.isSessionName(sessionName) else {
            diagnostics.error(
                "role_session_name must be 2 to 64 characters of letters, digits and _+=,.@-",
                at: session?.position ?? reader.table.position)
            return nil
        }
        if let external = reader.string("external_id"), !(2...1224).contains(external.value.utf8.count) {
            diagnostics.error("external_id must be 2 to 1224 characters", at: external.position)
            return nil
        }
        var duration = STSEndpoint.defaultDurationSeconds
        if reader.contains("duration") {
            guard let value = reader.duration("duration", in: STSEndpoint.durations) else { return nil }
            duration = value.milliseconds / 1000
        }
        return (arn, sessionName, duration)
    }

    /// `sts_endpoint`, `sts_region`: nil with errors reported when malformed.
    static func decodeSTS(reader: TableReader, context: DecodingContext, caFile: String?) -> STSEndpoint? {
        let diagnostics = reader.diagnostics
        var sts = STSEndpoint.fromEnvironment(context.environment, awsRegion: context.awsRegion, caFile: caFile)
        if let region = reader.string("sts_region") {
            guard !region.value.isEmpty, region.value.utf8.count <= 64,
                region.value.utf8.allSatisfy({ ASCIIClass.isAlphanumeric($0) || $0 == UInt8(ascii: "-") })
            else {
                diagnostics.error("invalid sts_region '\(region.value)'", at: region.position)
                return nil
            }
            sts.region = region.value
            if nonEmpty(context.environment["AWS_ENDPOINT_URL_STS"]) == nil {
                sts.endpoint = STSEndpoint.regional(region.value)
            }
        }
        if let written = reader.string("sts_endpoint") {
            var text = written.value
            while text.hasSuffix("/") { text.removeLast() }
            switch Endpoint.parse(text) {
            case .success(let endpoint):
                sts.endpoint = endpoint
                if endpoint.scheme == .http {
                    diagnostics.warning(
                        "sts_endpoint uses http://: the STS answer carries secret keys (use only for local test "
                            + "servers)", at: written.position)
                }
            case .failure(let error):
                diagnostics.error("invalid sts_endpoint '\(written.value)': \(error.reason)", at: written.position)
                return nil
            }
        }
        return sts
    }
}

extension STSEndpoint {
    /// The SDKs' defaults: `AWS_ENDPOINT_URL_STS`, the region from the upstream, `AWS_REGION`, `AWS_DEFAULT_REGION`
    /// or us-east-1, the regional endpoint; the CA bundle from `AWS_CA_BUNDLE`.
    static func fromEnvironment(_ environment: [String: String], awsRegion: String?, caFile: String?) -> STSEndpoint {
        let region =
            awsRegion ?? nonEmpty(environment["AWS_REGION"]) ?? nonEmpty(environment["AWS_DEFAULT_REGION"])
            ?? "us-east-1"
        var endpoint = regional(region)
        if let text = nonEmpty(environment["AWS_ENDPOINT_URL_STS"]) {
            var trimmed = text
            while trimmed.hasSuffix("/") { trimmed.removeLast() }
            if case .success(let parsed) = Endpoint.parse(trimmed) { endpoint = parsed }
        }
        return STSEndpoint(
            endpoint: endpoint, region: region, caFile: caFile ?? nonEmpty(environment["AWS_CA_BUNDLE"]))
    }
}

/// A set, non-empty environment value.
func nonEmpty(_ value: String?) -> String? {
    guard let value, !value.isEmpty else { return nil }
    return value
}
