import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// Why presignd could not start serving; `main` maps these to exit code 71 (OS error).
public enum StartupError: Error, CustomStringConvertible, Sendable {
    case resolve(address: String, reason: String)
    case socket(address: String, call: String, errno: Int32)
    case eventLoop(String)
    case tls(String)
    /// The configuration cannot run within `RLIMIT_NOFILE`.
    case descriptorLimit(String)
    /// A cache directory cannot be opened (held by another process, not creatable, unreadable).
    case cache(directory: String, reason: String)

    public var description: String {
        switch self {
        case .resolve(let address, let reason): "cannot resolve listen address \(address): \(reason)"
        case .socket(let address, let call, let code):
            "cannot listen on \(address): \(call): \(String(cString: strerror(code)))"
                + Self.advice(address: address, call: call, errno: code)
        case .eventLoop(let reason): "event loop: \(reason)"
        case .tls(let reason): "TLS setup: \(reason)"
        case .descriptorLimit(let reason): reason
        case .cache(let directory, let reason): "cannot open cache directory \(directory): \(reason)"
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

extension StartupError {
    init(_ error: ListenError) {
        switch error {
        case .resolve(let address, let reason): self = .resolve(address: address, reason: reason)
        case .socket(let address, let call, let code): self = .socket(address: address, call: call, errno: code)
        }
    }

    init(_ error: IOError) {
        self = .eventLoop(error.description)
    }
}
