/// Retries and upstream clocks on `/metrics` (issue 21 §3, §4).
extension MetricsText {
    static func renderRetries(workers: [WorkerMetrics.Counters], clocks: [UpstreamClock]) -> String {
        var retries: [String: [String: Int]] = [:]
        var outcomes: [String: [String: Int]] = [:]
        for counters in workers {
            for (name, upstream) in counters.upstreams {
                retries[name, default: [:]].merge(upstream.retries, uniquingKeysWith: +)
                outcomes[name, default: [:]].merge(upstream.retryOutcomes, uniquingKeysWith: +)
            }
        }
        var out = header(
            "presignd_upstream_retries", "Requests sent to an upstream again, by upstream and reason.", type: "counter")
        out += samples("presignd_upstream_retries_total", label: "reason", retries)
        out += header(
            "presignd_upstream_retry_outcomes",
            "Retried requests by result, and retryable failures not retried by why, per upstream.", type: "counter")
        out += samples("presignd_upstream_retry_outcomes_total", label: "outcome", outcomes)
        out += header(
            "presignd_upstream_clock_offset_seconds",
            "The upstream's clock minus the local clock, from its Date header; added to every signing time.",
            type: "gauge")
        for clock in clocks {
            out += "presignd_upstream_clock_offset_seconds{upstream=\(label(clock.name))} \(clock.offsetSeconds)\n"
        }
        return out
    }

    private static func samples(_ name: String, label key: String, _ values: [String: [String: Int]]) -> String {
        var out = ""
        for upstream in values.keys.sorted() {
            for (value, count) in (values[upstream] ?? [:]).sorted(by: { $0.key < $1.key }) {
                out += "\(name){upstream=\(label(upstream)),\(key)=\(label(value))} \(count)\n"
            }
        }
        return out
    }
}
