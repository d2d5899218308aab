import Synchronization

/// What a worker counts about the process-wide limits (issue 20): accept pauses, connections and requests shed,
/// slow bodies cut. Stored by the worker, read by `/metrics` and `/readyz` (atomics: no lock on either side).
final class LimitCounters: Sendable {
    private let acceptPausesStorage = Atomic<Int>(0)
    private let shedConnectionsStorage = Atomic<Int>(0)
    private let shedSpoolStorage = Atomic<Int>(0)
    private let slowBodiesStorage = Atomic<Int>(0)
    private let pausedStorage = Atomic<Bool>(false)
    private let atCapacityStorage = Atomic<Bool>(false)

    /// Failed accepts that paused a listener (EMFILE, ENFILE, ENOBUFS, ENOMEM).
    var acceptPauses: Int { acceptPausesStorage.load(ordering: .relaxed) }
    /// Connections over `max_connections`, answered `503 SlowDown` and closed.
    var shedConnections: Int { shedConnectionsStorage.load(ordering: .relaxed) }
    /// Uploads refused because the spool budget (`max_spool_total`) was used up.
    var shedSpoolRequests: Int { shedSpoolStorage.load(ordering: .relaxed) }
    /// Exchanges cut because a body moved slower than `min_body_rate`.
    var slowBodyAborts: Int { slowBodiesStorage.load(ordering: .relaxed) }
    /// A listener of this worker is paused after a failed accept.
    var isAcceptPaused: Bool { pausedStorage.load(ordering: .relaxed) }
    /// The worker holds `max_connections` connections: new ones are shed.
    var isAtCapacity: Bool { atCapacityStorage.load(ordering: .relaxed) }

    // Written by the owning worker only: a load and a store, no locked instruction.
    func acceptPaused() {
        acceptPausesStorage.store(acceptPauses + 1, ordering: .relaxed)
        pausedStorage.store(true, ordering: .relaxed)
    }

    func acceptResumed() { pausedStorage.store(false, ordering: .relaxed) }
    func connectionShed() { shedConnectionsStorage.store(shedConnections + 1, ordering: .relaxed) }
    func spoolRequestShed() { shedSpoolStorage.store(shedSpoolRequests + 1, ordering: .relaxed) }
    func slowBodyAborted() { slowBodiesStorage.store(slowBodyAborts + 1, ordering: .relaxed) }
    func setAtCapacity(_ value: Bool) { atCapacityStorage.store(value, ordering: .relaxed) }
}
