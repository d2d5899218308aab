import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// Why presignd could not start serving; `main` maps these to exit code 71 (OS error).
public enum StartupError: Error, CustomStringConvertible, Sendable {
    case resolve(address: String, reason: String)
    case socket(address: String, call: String, errno: Int32)
    case eventLoop(String)
    case tls(String)

    public var description: String {
        switch self {
        case .resolve(let address, let reason): "cannot resolve listen address \(address): \(reason)"
        case .socket(let address, let call, let code):
            "cannot listen on \(address): \(call): \(String(cString: strerror(code)))"
                + Self.advice(address: address, call: call, errno: code)
        case .eventLoop(let reason): "event loop: \(reason)"
        case .tls(let reason): "TLS setup: \(reason)"
        }
    }

    /// What to do about the bind failures a first run meets; empty for the rest.
    static func advice(address: String, call: String, errno code: Int32) -> String {
        guard call == "bind" else { return "" }
        if address.hasPrefix("unix:") {
            let path = address.dropFirst("unix:".count)
            switch code {
            case EADDRINUSE:
                return "; something that is not a socket exists at \(path): remove it or choose another path in listen"
            case EACCES, EPERM, EROFS:
                return "; the user presignd runs as cannot create \(path): make its directory writable for that user "
                    + "(the systemd unit creates /run/presignd) or choose another path in listen"
            case ENOENT:
                return "; the directory of \(path) does not exist: create it or choose another path in listen"
            default: return ""
            }
        }
        let port = address.split(separator: ":").last.map(String.init) ?? ""
        switch code {
        case EADDRINUSE:
            return "; another program (or another presignd) is listening there: find it with "
                + "`ss -ltnp 'sport = :\(port)'` and stop it, or set a free port for this address in listen or "
                + "admin_listen"
        case EACCES:
            return "; ports below 1024 need CAP_NET_BIND_SERVICE (the systemd unit grants none): use a port above 1023"
        case EADDRNOTAVAIL:
            return "; no network interface of this machine has that address: use 127.0.0.1, [::1] or an address "
                + "`ip -brief address` lists"
        default: return ""
        }
    }
}

/// A bound, listening, non-blocking socket created on the main thread and handed to a worker.
/// TCP listeners get one socket per worker, all bound to the same port with `SO_REUSEPORT`, so the
/// kernel spreads connections; a `unix:` listener is one socket that every worker accepts from.
/// `SO_REUSEPORT` would also let a second presignd (same user) bind a port this one serves and
/// silently take half its connections: a listener's first socket checks the port is free first.
struct ListenSocket: Sendable {
    let fd: Int32
    /// The address as bound, port 0 resolved (`127.0.0.1:43211`, `[::1]:8080`, `unix:/run/x.sock`).
    let boundAddress: String
    let isUnix: Bool

    /// Binds a TCP listener; `port` 0 picks a free port, which later sockets for the same listener reuse
    /// (`joining`: another worker's socket for a port this process already holds). A first socket for a
    /// fixed port fails with `EADDRINUSE` when anything else listens there, `SO_REUSEPORT` or not.
    static func tcp(host: String, port: Int, joining: Bool = false, backlog: Int32 = 1024) throws(StartupError)
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
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        if info.pointee.ai_family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
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
        evutil_make_socket_nonblocking(fd)
        return ListenSocket(fd: fd, boundAddress: Self.localAddress(fd) ?? display, isUnix: false)
    }

    /// Binds a `unix:` listener, replacing a stale socket file, with the given permission bits.
    /// Binds a throwaway socket without `SO_REUSEPORT` to the address: that fails while any socket
    /// listens there (`SO_REUSEADDR` still lets it past connections in TIME_WAIT). Nothing listens on it.
    private static func requirePortFree(_ info: addrinfo, display: String) throws(StartupError) {
        let probe = socket(info.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw .socket(address: display, call: "socket", errno: errno) }
        defer { close(probe) }
        var one: Int32 = 1
        setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if info.ai_family == AF_INET6 {
            setsockopt(probe, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        if bind(probe, info.ai_addr, info.ai_addrlen) != 0 && errno == EADDRINUSE {
            throw .socket(address: display, call: "bind", errno: EADDRINUSE)
        }
    }

    static func unix(path: String, mode: UInt32, backlog: Int32 = 1024) throws(StartupError) -> ListenSocket {
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
        var status = lstat(path)
        if status.exists && status.isSocket { unlink(path) }
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
        chmod(path, mode_t(mode))
        guard listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .socket(address: display, call: "listen", errno: code)
        }
        evutil_make_socket_nonblocking(fd)
        status = lstat(path)
        return ListenSocket(fd: fd, boundAddress: display, isUnix: true)
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
    static func localAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        return SocketAddress(storage).description
    }
}
