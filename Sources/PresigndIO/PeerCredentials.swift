#if canImport(Glibc)
    import Glibc
#endif

/// A unix-socket peer's credentials as the kernel recorded them at `connect` (`SO_PEERCRED`, unix(7)): not
/// something the client can claim.
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    /// The credentials of the peer of `fd`, or nil when it is not a unix socket or the call fails.
    public init?(fd: Int32) {
        // `struct ucred { pid_t pid; uid_t uid; gid_t gid; }`: Glibc exports it only under _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        let size = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        var length = size
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, length == size else { return nil }
        // Linux answers for sockets without credentials (TCP) with pid 0 and uid/gid -1 rather than an error.
        guard credentials.uid != UInt32.max, credentials.gid != UInt32.max else { return nil }
        pid = credentials.pid
        uid = credentials.uid
        gid = credentials.gid
    }
}
