/// A worker's keep-alive pool for one upstream: idle connections, most recently used first out.
final class UpstreamPool {
    let upstreamIndex: Int
    let sessions = TLSSessionStore()
    private var idle: [UpstreamConnection] = []
    private(set) var created = 0
    private(set) var reused = 0
    /// Told the idle count after every change (`reportIdleCount`). The worker's metrics outlive its pools:
    /// `unowned(unsafe)` spares a retain and a release per call, as a stored closure would cost.
    private unowned(unsafe) var metrics: WorkerMetrics?
    private var metricSlot = 0

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
        self.metrics = metrics
        metricSlot = slot
    }

    private func idleCountChanged() {
        metrics?.poolIdle(slot: metricSlot, count: idle.count)
    }

    /// A pooled connection, or nil when the caller must connect a new one.
    func take() -> UpstreamConnection? {
        guard let connection = idle.popLast() else { return nil }
        connection.idlePool = nil
        connection.isReused = true
        reused += 1
        idleCountChanged()
        return connection
    }

    func noteCreated() { created += 1 }

    /// Parks a connection whose last exchange ended cleanly; closes it when the pool is full.
    func put(_ connection: UpstreamConnection) {
        connection.delegate = nil
        guard idle.count < maxIdleConnections else {
            connection.free()
            return
        }
        // While idle: any byte, EOF or the idle timeout closes it.
        connection.setTimeouts(readMilliseconds: idleTimeoutMilliseconds, writeMilliseconds: idleTimeoutMilliseconds)
        connection.idlePool = self
        connection.enableReading()
        idle.append(connection)
        idleCountChanged()
    }

    /// An idle connection spoke (a byte, EOF) or timed out: it is done.
    func remove(_ connection: UpstreamConnection) {
        idle.removeAll { $0 === connection }
        connection.free()
        idleCountChanged()
    }

    /// Closes every idle connection (shutdown, reload).
    func closeAll() {
        for connection in idle { connection.free() }
        idle.removeAll()
        idleCountChanged()
    }
}
