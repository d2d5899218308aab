import PresigndConfig

#if canImport(Glibc)
    import Glibc
#endif
import PresigndIO

/// A listen address as the daemon binds it.
public enum ListenSpec: Sendable, Hashable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}

/// Everything the daemon needs from a loaded configuration.
struct DaemonPlan: Sendable {
    var settings: ProxySettings
    var listen: [ListenSpec]
    var adminListen: ListenSpec?
    var workers: Int
    var shutdownTimeoutMilliseconds: Int
    /// Mode and owner of unix `listen` sockets, and of a unix `admin_listen` socket.
    var unixSocket: UnixSocketAccess
    var adminSocket: UnixSocketAccess
    /// One line per upstream/bucket for the startup log (never secrets).
    var summary: [(message: String, metadata: [(String, String)])]
    /// How the configuration meets the file-descriptor limit.
    var descriptors: DescriptorReport
    /// `max_spool_total` as configured, or from the spool directory's free space.
    var maxSpoolTotal: Int
    /// Upstreams whose credentials the daemon fetches and refreshes, by name.
    var refreshingCredentials: [String: RefreshingCredentialSource] = [:]
    /// The configuration the plan was made from: the credentials API checks minting against its buckets.
    var configuration: Configuration? = nil
    /// The cache directories the buckets name (issue 23), each opened once by the daemon.
    var cacheDirectories: [CacheDirectory] = []
}

extension DaemonPlan {
    /// `workers = 0` is one per online core.
    static func workerCount(configured: Int) -> Int {
        configured > 0 ? configured : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
