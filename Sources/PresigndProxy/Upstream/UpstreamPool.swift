/// A worker's keep-alive pool for one upstream: idle connections, most recently used first out. It is an idle
/// connection's delegate: a pooled connection must not talk, so whatever it says (a byte, EOF, the idle timeout)
/// ends it.
final class UpstreamPool: UpstreamConnectionDelegate {
    let upstreamIndex: Int
    let sessions = TLSSessionStore()
    private var idle: [UpstreamConnection] = []
    /// Holds the idle count after every change (`reportIdleCount`).
    private var idleGauge: IdleGauge?

    /// From the pool's `UpstreamTarget` (one pool per upstream and configuration).
    private let maxIdleConnections: Int
    private let idleTimeoutMilliseconds: Int

    init(upstreamIndex: Int, target: UpstreamTarget) {
        self.upstreamIndex = upstreamIndex
        self.maxIdleConnections = target.maxIdleConnections
        self.idleTimeoutMilliseconds = target.idleTimeoutMilliseconds
    }

    var idleCount: Int { idle.count }

    /// Publishes the idle count to `metrics` (gauge `slot`) after every change.
    func reportIdleCount(to metrics: WorkerMetrics, slot: Int) {
        let gauge = metrics.idleGauge(slot: slot)
        idleGauge = gauge
        gauge.set(idle.count)
    }

    private func idleCountChanged() {
        idleGauge?.set(idle.count)
    }

    /// A pooled connection, or nil when the caller must connect a new one.
    func take() -> UpstreamConnection? {
        var connections = idle  // taken out and put back: see `put`
        idle = []
        let last = connections.popLast()
        idle = connections
        guard let connection = last else { return nil }
        connection.delegate = nil
        connection.isReused = true
        idleCountChanged()
        return connection
    }

    /// Parks a connection whose last exchange ended cleanly; closes it when the pool is full.
    func put(_ connection: UpstreamConnection) {
        guard idle.count < maxIdleConnections else {
            connection.free()
            return
        }
        // While idle: any byte, EOF or the idle timeout closes it.
        connection.setTimeouts(readMilliseconds: idleTimeoutMilliseconds, writeMilliseconds: idleTimeoutMilliseconds)
        connection.delegate = self
        connection.enableReading()
        // Taken out, grown, put back: no access to `idle` is held across a call, so none needs a runtime
        // exclusivity check (the compiler proves them all safe), and the array stays uniquely referenced.
        var connections = idle
        idle = []
        connections.append(connection)
        idle = connections
        idleCountChanged()
    }

    /// An idle connection spoke (a byte, EOF) or timed out: it is done.
    func remove(_ connection: UpstreamConnection) {
        var connections = idle
        idle = []
        connections.removeAll { $0 === connection }
        idle = connections
        connection.free()
        idleCountChanged()
    }

    func upstreamReadable(_ connection: UpstreamConnection) { remove(connection) }
    func upstreamDrained(_ connection: UpstreamConnection) {}
    func upstreamEnded(_ connection: UpstreamConnection, _ failure: UpstreamFailure) { remove(connection) }

    /// Closes every idle connection (shutdown, reload).
    func closeAll() {
        let connections = idle
        idle = []
        for connection in connections { connection.free() }
        idleCountChanged()
    }
}
