import PresigndIO

/// The process-wide limits on `/metrics` (issue 20): descriptors against their limit, accept pauses, load shed,
/// spool space against its budget, slow bodies cut, admin connections refused.
extension MetricsText {
    struct LimitFigures {
        var workers: [LimitCounters]
        var spoolInUse: Int
        var spoolBudget: Int
        var adminOpen: Int
        var adminRefused: Int
    }

    static func renderLimits(_ figures: LimitFigures) -> String {
        var out = ""
        if let open = DescriptorLimit.openCount() {
            out += gauge("process_open_fds", "Open file descriptors.", open)
        }
        if let limit = try? DescriptorLimit.current(), limit.soft != Int.max {
            out += gauge("process_max_fds", "The file-descriptor limit (soft RLIMIT_NOFILE).", limit.soft)
        }
        let workers = figures.workers
        out += counter(
            "presignd_accept_pauses", "Failed accepts (descriptor or memory limit) that paused a listener.",
            workers.reduce(0) { $0 + $1.acceptPauses })
        out += gauge(
            "presignd_accept_paused_workers", "Workers whose listener is paused after a failed accept.",
            workers.filter(\.isAcceptPaused).count)
        out += header("presignd_shed", "Connections and requests answered 503 SlowDown at a limit.", type: "counter")
        out += "presignd_shed_total{reason=\"max_connections\"} \(workers.reduce(0) { $0 + $1.shedConnections })\n"
        out += "presignd_shed_total{reason=\"max_spool_total\"} \(workers.reduce(0) { $0 + $1.shedSpoolRequests })\n"
        out += gauge("presignd_spool_bytes", "Bytes spooled uploads hold or have reserved.", figures.spoolInUse)
        out += gauge("presignd_spool_budget_bytes", "max_spool_total.", figures.spoolBudget)
        out += counter(
            "presignd_slow_body_aborts", "Exchanges cut because a body moved slower than min_body_rate.",
            workers.reduce(0) { $0 + $1.slowBodyAborts })
        out += gauge("presignd_admin_connections_open", "Open admin connections.", figures.adminOpen)
        out += counter(
            "presignd_admin_connections_refused", "Admin connections closed at max_admin_connections.",
            figures.adminRefused)
        return out
    }
}
