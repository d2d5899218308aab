/// A worker's keep-alive pool for one upstream: idle connections, most recently used first out.
final class UpstreamPool {
    let upstreamIndex: Int
    let sessions = TLSSessionStore()
    private var idle: [UpstreamConnection] = []
    private(set) var created = 0
    /// One closure for every parked connection (not one allocated per request).
    private lazy var removeOnIdleClose: (UpstreamConnection) -> Void = { [unowned self] closed in self.remove(closed) }
    private(set) var reused = 0
    /// Told the idle count after every change (the worker publishes it as a metric).
    var onIdleCountChange: ((Int) -> Void)?

    /// From the pool's `UpstreamTarget` (one pool per upstream and configuration).
    private let maxIdleConnections: Int
    private let idleTimeoutMilliseconds: Int

    init(upstreamIndex: Int, target: UpstreamTarget) {
        self.upstreamIndex = upstreamIndex
        self.maxIdleConnections = target.maxIdleConnections
        self.idleTimeoutMilliseconds = target.idleTimeoutMilliseconds
    }

    var idleCount: Int { idle.count }

    /// A pooled connection, or nil when the caller must connect a new one.
    func take() -> UpstreamConnection? {
        guard let connection = idle.popLast() else { return nil }
        connection.onIdleClose = nil
        connection.isReused = true
        reused += 1
        onIdleCountChange?(idle.count)
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
        connection.onIdleClose = removeOnIdleClose
        connection.enableReading()
        idle.append(connection)
        onIdleCountChange?(idle.count)
    }

    private func remove(_ connection: UpstreamConnection) {
        idle.removeAll { $0 === connection }
        connection.free()
        onIdleCountChange?(idle.count)
    }

    /// Closes every idle connection (shutdown, reload).
    func closeAll() {
        for connection in idle { connection.free() }
        idle.removeAll()
        onIdleCountChange?(0)
    }
}
