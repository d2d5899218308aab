internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A bound, listening, non-blocking socket created on the main thread and handed to a worker.
/// TCP listeners get one socket per worker, all bound to the same port with `SO_REUSEPORT`, so the
/// kernel spreads connections; a `unix:` listener is one socket that every worker accepts from.
/// `SO_REUSEPORT` would also let a second presignd (same user) bind a port this one serves and
/// silently take half its connections: a listener's first socket checks the port is free first.
public struct ListenSocket: Sendable {
    public let fd: Int32
    /// The address as bound, port 0 resolved (`127.0.0.1:43211`, `[::1]:8080`, `unix:/run/x.sock`).
    public let boundAddress: String
    public let isUnix: Bool

    /// A socket listening already (a `dup` of another worker's unix socket).
    public init(fd: Int32, boundAddress: String, isUnix: Bool) {
        self.fd = fd
        self.boundAddress = boundAddress
        self.isUnix = isUnix
    }

    /// Binds a TCP listener; `port` 0 picks a free port, which later sockets for the same listener reuse
    /// (`joining`: another worker's socket for a port this process already holds). A first socket for a
    /// fixed port fails with `EADDRINUSE` when anything else listens there, `SO_REUSEPORT` or not.
    public static func tcp(host: String, port: Int, joining: Bool = false, backlog: Int32 = 1024) throws(ListenError)
        -> ListenSocket
    {
        let display = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let info = result else {
            throw .resolve(address: display, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(result) }
        if port != 0 && !joining {
            try requirePortFree(info.pointee, display: display)
        }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(address: display, call: "socket", errno: errno) }
        try enable(SOL_SOCKET, SO_REUSEADDR, "SO_REUSEADDR", on: fd, display: display)
        try enable(SOL_SOCKET, SO_REUSEPORT, "SO_REUSEPORT", on: fd, display: display)
        if info.pointee.ai_family == AF_INET6 {
            try enable(Int32(IPPROTO_IPV6), IPV6_V6ONLY, "IPV6_V6ONLY", on: fd, display: display)
        }
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "bind", errno: code)
        }
        guard listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "listen", errno: code)
        }
        try makeNonBlocking(fd, display: display)
        return ListenSocket(fd: fd, boundAddress: Self.localAddress(fd) ?? display, isUnix: false)
    }

    /// Binds a `unix:` listener, replacing a stale socket file, with the given permission bits.
    /// Binds a throwaway socket without `SO_REUSEPORT` to the address: that fails while any socket
    /// listens there (`SO_REUSEADDR` still lets it past connections in TIME_WAIT). Nothing listens on it.
    private static func requirePortFree(_ info: addrinfo, display: String) throws(ListenError) {
        let probe = socket(info.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw .socket(address: display, call: "socket", errno: errno) }
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        guard setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, size) == 0,
            info.ai_family != AF_INET6 || setsockopt(probe, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, size) == 0
        else {
            let code = errno
            close(probe)
            throw .socket(address: display, call: "setsockopt", errno: code)
        }
        defer { close(probe) }
        if bind(probe, info.ai_addr, info.ai_addrlen) != 0 && errno == EADDRINUSE {
            throw .socket(address: display, call: "bind", errno: EADDRINUSE)
        }
    }

    public static func unix(path: String, access: UnixSocketAccess, backlog: Int32 = 1024) throws(ListenError)
        -> ListenSocket
    {
        let display = "unix:" + path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw .resolve(address: display, reason: "path longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(address: display, call: "socket", errno: errno) }
        let status = lstat(path)
        // A stale socket file goes; if it cannot, bind reports EADDRINUSE below.
        if status.exists && status.isSocket { _ = unlink(path) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "bind", errno: code)
        }
        // Owner first: chown may clear set-id bits, and the mode is what the configuration says.
        if access.owner != nil || access.group != nil {
            guard
                chown(path, access.owner.map { uid_t($0) } ?? uid_t.max, access.group.map { gid_t($0) } ?? gid_t.max)
                    == 0
            else {
                let code = errno
                close(fd)
                _ = unlink(path)
                throw .socket(address: display, call: "chown", errno: code)
            }
        }
        guard chmod(path, mode_t(access.mode)) == 0 else {
            let code = errno
            close(fd)
            _ = unlink(path)
            throw .socket(address: display, call: "chmod", errno: code)
        }
        guard listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "listen", errno: code)
        }
        try makeNonBlocking(fd, display: display)
        return ListenSocket(fd: fd, boundAddress: display, isUnix: true)
    }

    /// Turns a boolean socket option on, or closes the socket and throws.
    private static func enable(
        _ level: Int32, _ option: Int32, _ name: String, on fd: Int32, display: String
    ) throws(ListenError) {
        var one: Int32 = 1
        guard setsockopt(fd, level, option, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "setsockopt(\(name))", errno: code)
        }
    }

    private static func makeNonBlocking(_ fd: Int32, display: String) throws(ListenError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "fcntl", errno: code)
        }
    }

    private struct FileStatus {
        var exists: Bool
        var isSocket: Bool
    }

    private static func lstat(_ path: String) -> FileStatus {
        var info = stat()
        guard Glibc.lstat(path, &info) == 0 else { return FileStatus(exists: false, isSocket: false) }
        return FileStatus(exists: true, isSocket: (info.st_mode & S_IFMT) == S_IFSOCK)
    }

    /// The socket's bound address as text (`getsockname`).
    public static func localAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        return SocketAddress(storage).description
    }
}

/// Who may connect to a unix socket listener: its permission bits and, optionally, its owner and group.
public struct UnixSocketAccess: Sendable, Hashable {
    public var mode: UInt32
    /// nil keeps the process user.
    public var owner: UInt32?
    /// nil keeps the process group.
    public var group: UInt32?

    public init(mode: UInt32, owner: UInt32? = nil, group: UInt32? = nil) {
        self.mode = mode
        self.owner = owner
        self.group = group
    }
}
