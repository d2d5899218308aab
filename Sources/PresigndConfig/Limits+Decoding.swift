/// Reading `[server.limits]`.
extension Limits {
    static let keys = [
        "max_request_line_bytes", "max_header_bytes", "max_header_count", "header_timeout", "idle_timeout",
        "body_idle_timeout", "max_connections", "max_upstream_connections", "max_admin_connections",
        "admin_request_timeout", "max_admin_body_size", "min_body_rate", "body_rate_window",
    ]

    static func decode(_ reader: TableReader) -> Limits {
        var limits = Limits()
        let headBytes = 256...(16 * ByteSize.mebibyte)
        let timeouts = ConfigDuration(milliseconds: 1)...ConfigDuration.days(1)
        if let value = reader.size("max_request_line_bytes", in: headBytes) { limits.maxRequestLineBytes = value }
        if let value = reader.size("max_header_bytes", in: headBytes) { limits.maxHeaderBytes = value }
        if let value = reader.integer("max_header_count", in: 1...10_000) { limits.maxHeaderCount = value }
        if let value = reader.duration("header_timeout", in: timeouts) { limits.headerTimeout = value }
        if let value = reader.duration("idle_timeout", in: timeouts) { limits.idleTimeout = value }
        if let value = reader.duration("body_idle_timeout", in: timeouts) { limits.bodyIdleTimeout = value }
        if let value = reader.integer("max_connections", in: 1...1_000_000) { limits.maxConnections = value }
        if let value = reader.integer("max_upstream_connections", in: 1...100_000) {
            limits.maxUpstreamConnections = value
        }
        if let value = reader.integer("max_admin_connections", in: 1...100_000) {
            limits.maxAdminConnections = value
        }
        if let value = reader.duration("admin_request_timeout", in: timeouts) { limits.adminRequestTimeout = value }
        if let value = reader.size("max_admin_body_size", in: 1024...(16 * ByteSize.mebibyte)) {
            limits.maxAdminBodySize = value
        }
        if let value = reader.rate("min_body_rate", in: 0...(1 << 40)) { limits.minBodyRate = value }
        if let value = reader.duration("body_rate_window", in: .seconds(1)...ConfigDuration.hours(1)) {
            limits.bodyRateWindow = value
        }
        if limits.maxRequestLineBytes > limits.maxHeaderBytes {
            reader.diagnostics.error(
                "max_request_line_bytes must not exceed max_header_bytes",
                at: reader.keyPosition("max_request_line_bytes"))
        }
        reader.reportUnknownKeys()
        return limits
    }
}
