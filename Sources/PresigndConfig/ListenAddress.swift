/// Where presignd accepts connections: a TCP host and port, or a unix domain socket.
///
/// Written `"127.0.0.1:8080"`, `"[::1]:8080"`, `"localhost:8080"` or `"unix:/run/presignd/presignd.sock"`.
/// Port 0 asks the kernel for a free port (tests read the bound port back).
public enum ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// `host` is an IPv4 address, an IPv6 address without brackets, or a host name.
    case tcp(host: String, port: Int)
    /// An absolute filesystem path.
    case unix(path: String)

    /// Parses the configuration spelling; nil with a reason when it is malformed.
    public static func parse(_ text: String) -> Result<ListenAddress, AddressSyntaxError> {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/") else { return .failure(.init("unix socket path must be absolute")) }
            guard path.utf8.count < 108 else {  // sockaddr_un.sun_path, including the terminating NUL
                return .failure(.init("unix socket path is longer than 107 bytes"))
            }
            return .success(.unix(path: path))
        }
        guard let colon = text.lastIndex(of: ":") else {
            return .failure(.init("expected HOST:PORT, [IPV6]:PORT or unix:/PATH"))
        }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(portText), port <= 65535
        else { return .failure(.init("port must be a number from 0 to 65535")) }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), let address = IPAddress(String(host.dropFirst().dropLast())),
                !address.isIPv4
            else { return .failure(.init("expected an IPv6 address inside brackets, e.g. [::1]:8080")) }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return .failure(.init("IPv6 addresses need brackets, e.g. [::1]:8080"))
        } else if IPAddress.parseIPv4(Substring(host)) == nil && !Endpoint.isHostName(host) {
            return .failure(.init("expected an IP address or a host name before the port"))
        }
        return .success(.tcp(host: host, port: port))
    }

    /// Whether only this machine can connect: unix sockets, `localhost`, 127.0.0.0/8 and `::1`.
    public var isLoopback: Bool {
        switch self {
        case .unix:
            return true
        case .tcp(let host, _):
            if host == "localhost" || host.hasSuffix(".localhost") { return true }
            return IPAddress(host)?.isLoopback ?? false
        }
    }

    public var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}

/// Why a listen address or an endpoint did not parse.
public struct AddressSyntaxError: Error, Sendable, Hashable {
    public var reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}
