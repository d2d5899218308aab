import PresigndCache

/// What a configuration needs of the file-descriptor limit (`RLIMIT_NOFILE`), and the `max_connections` that fits
/// it (issue 20). Pure: the limit is a parameter.
///
/// A client connection holds at worst three descriptors (its socket, an upstream socket, a spool file), or with a
/// read cache `perCachedConnection` (a cached answer queues up to `CacheRead.maxSlicesPerAnswer` slice files behind
/// its head, and one revalidated or composed holds an upstream socket too); each worker
/// adds its listeners (each with a spare descriptor), its loop's own descriptors and its pooled idle upstream
/// connections (no more per upstream than connections in flight could have left behind); the admin listener adds
/// its connection cap; each cache directory its lock and the slice descriptors it keeps open (`SliceDescriptors`);
/// the reserve covers standard streams, the main loop, configuration and credential files, DNS lookups.
struct DescriptorBudget: Equatable, Sendable {
    static let reserve = 32
    /// A worker loop's epoll descriptor, its notification pair and its cross-thread event.
    static let perWorker = 4
    static let perConnection = 3
    /// The socket, an upstream socket and the slice files one cached answer may have queued at once.
    static let perCachedConnection = 2 + CacheRead.maxSlicesPerAnswer
    /// The largest `max_connections` picked by default: beyond it the limit is not what holds a worker back.
    static let automaticCap = 16384

    var workers: Int
    var listenersPerWorker: Int
    /// `max_idle_connections` of each upstream.
    var idlePerUpstream: [Int]
    /// The admin listener's connection cap; 0 without an admin listener.
    var adminConnections: Int
    /// Open cache directories (`[bucket.cache]`).
    var cacheDirectories: Int = 0

    /// Descriptors the process may hold with `connections` client connections per worker.
    func needed(connectionsPerWorker connections: Int) -> Int {
        let pooled = idlePerUpstream.reduce(0) { $0 + min($1, connections) }
        // A listener holds its socket and a spare descriptor (`Listener+Overflow.swift`).
        let admin = adminConnections > 0 ? adminConnections + 2 : 0
        let perConnection = cacheDirectories > 0 ? Self.perCachedConnection : Self.perConnection
        let perWorker = Self.perWorker + 2 * listenersPerWorker + perConnection * connections + pooled
        let caches = cacheDirectories * (1 + SliceStore.keptDescriptors)
        return Self.reserve + admin + caches + workers * perWorker
    }

    /// The most connections per worker (up to `automaticCap`) that fit in `limit`; 0 when not even one does.
    func fittingConnections(limit: Int) -> Int {
        guard needed(connectionsPerWorker: 1) <= limit else { return 0 }
        var low = 1
        var high = Self.automaticCap
        while low < high {
            let middle = (low + high + 1) / 2
            if needed(connectionsPerWorker: middle) <= limit { low = middle } else { high = middle - 1 }
        }
        return low
    }
}

/// How the configuration meets the descriptor limit: logged by `run`, printed by `check-config`.
public struct DescriptorReport: Sendable, Equatable {
    /// The soft limit in force (after raising it to the hard one).
    public var limit: Int
    /// Client connections per worker: configured, or picked from the limit.
    public var maxConnections: Int
    public var isAutomatic: Bool
    /// Descriptors the configuration may need at `maxConnections`.
    public var needed: Int
    public var workers: Int

    /// A warning when configured connections do not fit (accepting then pauses at the limit instead).
    public var warning: String? {
        guard !isAutomatic, needed > limit else { return nil }
        return "max_connections = \(maxConnections) with \(workers) worker(s) may need \(needed) file descriptors, "
            + "above the limit of \(limit): raise LimitNOFILE= (systemd) or --ulimit nofile= (Docker), or lower "
            + "max_connections"
    }

    /// The `check-config` line.
    public var summary: String {
        let limitText = limit == Int.max ? "unlimited" : String(limit)
        return "file descriptors: limit \(limitText), max_connections \(maxConnections) per worker"
            + (isAutomatic ? " (from the limit)" : "") + " × \(workers) worker(s), up to \(needed) needed"
    }
}
