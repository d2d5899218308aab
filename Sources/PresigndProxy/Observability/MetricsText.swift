import PresigndIO

/// Prometheus text exposition (format 0.0.4) of the workers' counters (DESIGN §5, issue 4).
/// Every family has HELP and TYPE lines, label values are escaped, and series are sorted, so the
/// output passes `promtool check metrics`.
enum MetricsText {
    static func render(workers: [WorkerMetrics.Counters], health: HealthState.State) -> String {
        var requests: [WorkerMetrics.RequestKey: Int] = [:]
        var upstreams: [String: WorkerMetrics.UpstreamCounters] = [:]
        var total = WorkerMetrics.Counters()
        var principals: [String: Int] = [:]
        for counters in workers {
            for (key, value) in counters.requests { requests[key, default: 0] += value }
            for (name, value) in counters.upstreams { upstreams[name, default: .init()].add(value) }
            total.bytesIn += counters.bytesIn
            total.bytesOut += counters.bytesOut
            total.inFlight += counters.inFlight
            total.openConnections += counters.openConnections
            total.totalConnections += counters.totalConnections
            total.duration.add(counters.duration)
            total.signingFailures += counters.signingFailures
            for (code, value) in counters.denials { total.denials[code, default: 0] += value }
            for (key, value) in counters.policyDenials { total.policyDenials[key, default: 0] += value }
            for (label, value) in counters.principals { principals[label, default: 0] += value }
        }
        var out = ""
        out += header("presignd_requests", "Requests by bucket, method and status class.", type: "counter")
        let sortedRequests = requests.sorted {
            ($0.key.bucket, $0.key.method, $0.key.statusClass) < ($1.key.bucket, $1.key.method, $1.key.statusClass)
        }
        for (key, value) in sortedRequests {
            out += "presignd_requests_total{bucket=\(label(key.bucket)),method=\(label(key.method)),"
            out += "status=\(label(key.statusClass))} \(value)\n"
        }
        out += gauge("presignd_requests_in_flight", "Requests in flight.", total.inFlight)
        out += gauge("presignd_client_connections_open", "Open client connections.", total.openConnections)
        out += counter("presignd_client_connections", "Accepted client connections.", total.totalConnections)
        out += counter("presignd_request_body_bytes", "Request body bytes forwarded upstream.", total.bytesIn)
        out += counter("presignd_response_body_bytes", "Response body bytes sent to clients.", total.bytesOut)
        out += counter("presignd_signing_failures", "Requests that could not be signed.", total.signingFailures)
        out += "# HELP presignd_denials_total Requests refused by bucket policy or a limit, by S3 error code.\n"
        out += "# TYPE presignd_denials_total counter\n"
        for (code, value) in total.denials.sorted(by: { $0.key < $1.key }) {
            out += "presignd_denials_total{code=\(label(code))} \(value)\n"
        }
        out += "# HELP presignd_denied_total Requests the access policy refused, by S3 operation and reason.\n"
        out += "# TYPE presignd_denied_total counter\n"
        for (key, value) in total.policyDenials.sorted(by: {
            ($0.key.operation, $0.key.reason) < ($1.key.operation, $1.key.reason)
        }) {
            out += "presignd_denied_total{operation=\(label(key.operation)),reason=\(label(key.reason))} \(value)\n"
        }
        out += "# HELP presignd_principal_requests_total Requests by principal: unix, tcp, unknown or token:NAME.\n"
        out += "# TYPE presignd_principal_requests_total counter\n"
        for (principal, value) in principals.sorted(by: { $0.key < $1.key }) {
            out += "presignd_principal_requests_total{principal=\(label(principal))} \(value)\n"
        }
        out += header(
            "presignd_request_duration_seconds", "Request duration, head received to response complete.",
            type: "histogram")
        out += histogram("presignd_request_duration_seconds", labels: "", total.duration)

        let names = upstreams.keys.sorted()
        out += header(
            "presignd_upstream_response_seconds",
            "Upstream latency: signed head handed to the connection (a new one connects first) to response head.",
            type: "histogram")
        for name in names {
            guard let counters = upstreams[name] else { continue }
            out += histogram("presignd_upstream_response_seconds", labels: "upstream=\(label(name)),", counters.latency)
        }
        out += perUpstream(
            "presignd_upstream_pool_idle_connections", "Idle keep-alive connections pooled per upstream.",
            type: "gauge", names, upstreams
        ) { $0.idleConnections }
        out += perUpstream(
            "presignd_upstream_connections_opened_total", "New upstream connections opened for requests.",
            type: "counter", names, upstreams
        ) { $0.connectionsOpened }
        out += perUpstream(
            "presignd_upstream_connections_reused_total", "Requests sent on a pooled keep-alive connection.",
            type: "counter", names, upstreams
        ) { $0.connectionsReused }
        out += perUpstream(
            "presignd_upstream_tls_handshakes_total", "Completed TLS handshakes with an upstream.",
            type: "counter", names, upstreams
        ) { $0.tlsHandshakes }
        out += perUpstream(
            "presignd_upstream_tls_session_reuses_total", "TLS handshakes that resumed a cached session.",
            type: "counter", names, upstreams
        ) { $0.tlsSessionReuses }

        out += header("presignd_config_reloads", "Configuration reloads by result.", type: "counter")
        out += "presignd_config_reloads_total{result=\"failed\"} \(health.reloadsFailed)\n"
        out += "presignd_config_reloads_total{result=\"ok\"} \(health.reloadsOK)\n"
        out += gauge(
            "presignd_config_loaded_timestamp_seconds", "When the running configuration was loaded (Unix time).",
            health.loadedAtEpochSeconds)
        out += gauge(
            "presignd_config_load_duration_seconds", "How long reading and validating the running configuration took.",
            seconds(micros: health.loadDurationMicros))
        out += gauge("presignd_ready", "1 when serving, 0 while starting or draining.", health.isReady ? 1 : 0)
        out += gauge(
            "presignd_heap_in_use_bytes", "Bytes allocated by the process and not freed (glibc malloc, all arenas).",
            ProcessMemory.heapInUseBytes())
        if let resident = ProcessMemory.residentBytes() {
            out += gauge("process_resident_memory_bytes", "Resident memory size in bytes.", resident)
        }
        return out
    }

    /// HELP and TYPE lines; a counter's name gets its `_total` suffix here (text format 0.0.4 names
    /// the family as its samples are named).
    static func header(_ family: String, _ help: String, type: String) -> String {
        let name = type == "counter" ? family + "_total" : family
        return "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    static func gauge(_ name: String, _ help: String, _ value: Int) -> String {
        header(name, help, type: "gauge") + "\(name) \(value)\n"
    }

    private static func gauge(_ name: String, _ help: String, _ value: String) -> String {
        header(name, help, type: "gauge") + "\(name) \(value)\n"
    }

    static func counter(_ family: String, _ help: String, _ value: Int) -> String {
        header(family, help, type: "counter") + "\(family)_total \(value)\n"
    }

    private static func perUpstream(
        _ name: String, _ help: String, type: String, _ names: [String],
        _ upstreams: [String: WorkerMetrics.UpstreamCounters], _ value: (WorkerMetrics.UpstreamCounters) -> Int
    ) -> String {
        var out = "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for upstream in names {
            guard let counters = upstreams[upstream] else { continue }
            out += "\(name){upstream=\(label(upstream))} \(value(counters))\n"
        }
        return out
    }

    /// `_bucket` (cumulative, `+Inf` last), `_sum` and `_count` samples. `labels` ends with a comma when set.
    private static func histogram(_ name: String, labels: String, _ histogram: WorkerMetrics.Histogram) -> String {
        var out = ""
        var cumulative = 0
        for (index, bound) in WorkerMetrics.latencyBoundsMicros.enumerated() {
            cumulative += histogram.buckets[index]
            out += "\(name)_bucket{\(labels)le=\"\(seconds(micros: bound))\"} \(cumulative)\n"
        }
        cumulative += histogram.buckets[WorkerMetrics.latencyBoundsMicros.count]
        out += "\(name)_bucket{\(labels)le=\"+Inf\"} \(cumulative)\n"
        let plain = labels.isEmpty ? "" : "{" + String(labels.dropLast()) + "}"
        out += "\(name)_sum\(plain) \(seconds(micros: histogram.sumMicros))\n"
        out += "\(name)_count\(plain) \(histogram.count)\n"
        return out
    }

    /// Microseconds as decimal seconds (`0.0025`), trailing zeros trimmed.
    static func seconds(micros: Int) -> String {
        let whole = micros / 1_000_000
        var fraction = String(micros % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)"
    }

    /// A quoted label value (backslash, quote and newline escaped).
    static func label(_ value: String) -> String {
        var out = "\""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}

// MARK: - Presigned links (issue 7)

extension MetricsText {
    /// Links the presign API issued, by bucket and method; redirects served, by bucket (all workers).
    static func renderPresign(links: [PresignAdminState.LinkKey: Int], workers: [WorkerMetrics.Counters]) -> String {
        var redirects: [String: Int] = [:]
        for counters in workers {
            for (bucket, value) in counters.redirects { redirects[bucket, default: 0] += value }
        }
        var out = "# HELP presignd_presigned_links_total Presigned links issued by the presign API, by bucket "
        out += "and method.\n"
        out += "# TYPE presignd_presigned_links_total counter\n"
        for (key, value) in links.sorted(by: { ($0.key.bucket, $0.key.method) < ($1.key.bucket, $1.key.method) }) {
            out += "presignd_presigned_links_total{bucket=\(label(key.bucket)),method=\(label(key.method))} \(value)\n"
        }
        out += "# HELP presignd_redirects_total GET/HEAD requests answered with a 307 to a presigned URL, by bucket.\n"
        out += "# TYPE presignd_redirects_total counter\n"
        for (bucket, value) in redirects.sorted(by: { $0.key < $1.key }) {
            out += "presignd_redirects_total{bucket=\(label(bucket))} \(value)\n"
        }
        return out
    }
}
