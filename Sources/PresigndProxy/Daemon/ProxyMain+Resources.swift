import PresigndConfig
import PresigndIO

/// The process-wide limits a configuration meets: file descriptors and spool space (issue 20).
extension ProxyMain {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the soft limit in force (`Int.max` when it
    /// cannot be read: nothing is then computed from it).
    public static func raiseDescriptorLimit() -> Int {
        if let raised = try? DescriptorLimit.raiseSoftToHard() { return raised.soft }
        return (try? DescriptorLimit.current().soft) ?? Int.max
    }

    /// What `check-config` prints about the limits: summary lines, warnings, and the error that would stop `run`.
    public static func resourceReport(_ configuration: Configuration) -> (
        lines: [String], warnings: [String], error: String?
    ) {
        let limit = raiseDescriptorLimit()
        let report: DescriptorReport
        do {
            report = try DaemonPlan.descriptorReport(configuration, limit: limit)
        } catch {
            return ([], [], error.description)
        }
        let server = configuration.server
        let spoolTotal = server.maxSpoolTotal ?? SpoolBudget.automaticLimit(directory: server.spoolDirectory)
        let spoolLine =
            "spool: \(server.spoolDirectory), max_spool_total \(ByteSize.format(spoolTotal))"
            + (server.maxSpoolTotal == nil ? " (half the free space, at most 64GiB)" : "")
            + ", max_spool_size "
            + (server.maxSpoolSize.map { ByteSize.format($0) } ?? "the upstream's max_put_size")
        return ([report.summary, spoolLine], report.warning.map { [$0] } ?? [], nil)
    }
}
