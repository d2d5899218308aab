/// One access-log line (DESIGN §5, issue 4). Never the query string: it may carry presign
/// signatures; never header values.
struct AccessLogEntry {
    var requestID: String
    var client: String
    var bucket: String?
    var method: String
    /// Path without the query string.
    var path: String
    var status: Int
    var bytesIn: Int
    var bytesOut: Int
    var durationMicros: Int
    var upstreamStatus: Int?
    var upstreamMicros: Int?
    var upstreamReused: Bool?
    var errorCode: String?
    /// The S3 operation, when the policy classified one.
    var operation: String? = nil
    /// The policy rule that denied the request.
    var policyRule: String? = nil
    /// Who asked, when known.
    var principal: String? = nil
    /// Upstream attempts (issue 21 §3); nil when the request never went upstream.
    var upstreamAttempts: Int? = nil

    /// logfmt/JSON metadata, in a fixed order; the policy's keys only when there is something to say.
    var metadata: [(String, String)] {
        var fields: [(String, String)] = [
            ("request.id", requestID), ("client.address", client), ("bucket", bucket ?? "-"),
            ("http.method", method), ("http.path", path), ("http.status", String(status)),
            ("bytes.in", String(bytesIn)), ("bytes.out", String(bytesOut)),
            ("duration.ms", Self.milliseconds(durationMicros)),
            ("upstream.status", upstreamStatus.map(String.init) ?? "-"),
            ("upstream.ms", upstreamMicros.map(Self.milliseconds) ?? "-"),
            ("upstream.reused", upstreamReused.map { $0 ? "true" : "false" } ?? "-"),
            ("error.code", errorCode ?? "-"),
        ]
        if let upstreamAttempts { fields.append(("upstream.attempts", String(upstreamAttempts))) }
        if let principal { fields.append(("principal", principal)) }
        if let operation { fields.append(("s3.operation", operation)) }
        if let policyRule { fields.append(("policy.rule", policyRule)) }
        return fields
    }

    /// Microseconds as milliseconds with three decimals (`12.345`).
    static func milliseconds(_ micros: Int) -> String {
        let micros = max(0, micros)
        let fraction = String(micros % 1000)
        return String(micros / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
