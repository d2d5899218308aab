import PresigndIO
import PresigndSync

/// Messages other threads send a worker (the main thread, a cache store's writer).
enum WorkerMessage: Sendable {
    case drain
    case reload(ProxySettings, [ListenSocket]?)
    /// A refreshing upstream's new credentials (or why it has none), by upstream name.
    case credentials(String, UpstreamCredentialState)
    /// A connection waiting for another request's cache fill may decide again (`CacheWaiter`).
    case cacheWake(ObjectIdentifier)
}

/// A locked queue of worker messages; the worker takes them when its control event fires.
final class Mailbox: Sendable {
    private let messages = Locked<[WorkerMessage]>([])

    func post(_ message: WorkerMessage) {
        messages.withLock { $0.append(message) }
    }

    func takeAll() -> [WorkerMessage] {
        messages.withLock { queue in
            let taken = queue
            queue.removeAll()
            return taken
        }
    }
}
