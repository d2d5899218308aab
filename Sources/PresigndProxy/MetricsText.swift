/// Prometheus text exposition (format 0.0.4) of the workers' counters.
enum MetricsText {
    static func render(workers: [WorkerMetrics.Counters], health: HealthState.State) -> String {
        var requests: [WorkerMetrics.RequestKey: Int] = [:]
        var total = WorkerMetrics.Counters()
        for counters in workers {
            for (key, value) in counters.requests { requests[key, default: 0] += value }
            total.bytesIn += counters.bytesIn
            total.bytesOut += counters.bytesOut
            total.inFlight += counters.inFlight
            total.openConnections += counters.openConnections
            total.totalConnections += counters.totalConnections
            total.durationSumMs += counters.durationSumMs
            total.durationCount += counters.durationCount
            total.signingFailures += counters.signingFailures
            for index in total.durationBuckets.indices { total.durationBuckets[index] += counters.durationBuckets[index] }
        }
        var out = ""
        out += "# HELP presignd_requests_total Requests by bucket, method and status class.\n"
        out += "# TYPE presignd_requests_total counter\n"
        for (key, value) in requests.sorted(by: { "\($0.key)" < "\($1.key)" }) {
            out += "presignd_requests_total{bucket=\(label(key.bucket)),method=\(label(key.method)),"
            out += "status=\(label(key.statusClass))} \(value)\n"
        }
        out += gauge("presignd_requests_in_flight", "Requests in flight.", total.inFlight)
        out += gauge("presignd_client_connections_open", "Open client connections.", total.openConnections)
        out += counter("presignd_client_connections_total", "Accepted client connections.", total.totalConnections)
        out += counter("presignd_request_body_bytes_total", "Request body bytes forwarded upstream.", total.bytesIn)
        out += counter("presignd_response_body_bytes_total", "Response body bytes sent to clients.", total.bytesOut)
        out += counter("presignd_signing_failures_total", "Requests that could not be signed.", total.signingFailures)
        out += "# HELP presignd_request_duration_seconds Request duration, head to end of response.\n"
        out += "# TYPE presignd_request_duration_seconds histogram\n"
        var cumulative = 0
        for (index, bound) in WorkerMetrics.durationBounds.enumerated() {
            cumulative += total.durationBuckets[index]
            out += "presignd_request_duration_seconds_bucket{le=\"\(seconds(bound))\"} \(cumulative)\n"
        }
        cumulative += total.durationBuckets[WorkerMetrics.durationBounds.count]
        out += "presignd_request_duration_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "presignd_request_duration_seconds_sum \(seconds(total.durationSumMs))\n"
        out += "presignd_request_duration_seconds_count \(total.durationCount)\n"
        out += "# HELP presignd_config_reloads_total Configuration reloads by result.\n"
        out += "# TYPE presignd_config_reloads_total counter\n"
        out += "presignd_config_reloads_total{result=\"ok\"} \(health.reloadsOK)\n"
        out += "presignd_config_reloads_total{result=\"failed\"} \(health.reloadsFailed)\n"
        out += gauge(
            "presignd_config_loaded_timestamp_seconds", "When the running configuration was loaded.",
            health.loadedAtEpochSeconds)
        out += gauge("presignd_ready", "1 when serving, 0 while starting or draining.", health.isReady ? 1 : 0)
        return out
    }

    private static func gauge(_ name: String, _ help: String, _ value: Int) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
    }

    private static func counter(_ name: String, _ help: String, _ value: Int) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
    }

    private static func seconds(_ milliseconds: Int) -> String {
        let whole = milliseconds / 1000
        let fraction = milliseconds % 1000
        let text = String(fraction)
        return "\(whole)." + String(repeating: "0", count: 3 - text.count) + text
    }

    /// A quoted label value (backslash, quote and newline escaped).
    private static func label(_ value: String) -> String {
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
