/// An upstream's base URL: scheme, host and port, path-style (`https://host[:port]`, no path).
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// `http` is for local test servers only; the loader warns about it.
    public enum Scheme: String, Sendable, Hashable {
        case http
        case https

        public var defaultPort: Int { self == .https ? 443 : 80 }
    }

    public var scheme: Scheme
    /// Host name or IP address; IPv6 without brackets.
    public var host: String
    public var port: Int

    public init(scheme: Scheme, host: String, port: Int? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? scheme.defaultPort
    }

    /// Parses `https://host[:port][/]`; nil with a reason when malformed.
    public static func parse(_ text: String) -> Result<Endpoint, AddressSyntaxError> {
        let scheme: Scheme
        var rest: Substring
        if text.hasPrefix("https://") {
            scheme = .https
            rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            scheme = .http
            rest = text.dropFirst(7)
        } else {
            return .failure(.init("endpoint must start with https:// (or http:// for a local test server)"))
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("@") else {
            return .failure(.init("endpoint must be scheme://host[:port] without a path, query or user"))
        }
        // Reuse the listen-address grammar for host[:port] and [v6]:port.
        let hostPort = rest.hasSuffix("]") || !rest.contains(":") ? "\(rest):\(scheme.defaultPort)" : String(rest)
        guard case .success(.tcp(let host, let port)) = ListenAddress.parse(hostPort), port > 0 else {
            return .failure(.init("endpoint host or port is malformed"))
        }
        return .success(Endpoint(scheme: scheme, host: host, port: port))
    }

    /// The `Host` header value, which SigV4 signs: `host` with the port only when it is not the scheme's
    /// default, IPv6 in brackets (RFC 9110 §7.2).
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == scheme.defaultPort ? name : "\(name):\(port)"
    }

    /// `https://host[:port]`.
    public var description: String { "\(scheme.rawValue)://\(hostHeader)" }

    /// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens; the last label is not all
    /// digits (so a mistyped IPv4 address such as `999.0.0.1` is not taken for a name).
    static func isHostName(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let last = labels.last, !last.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        }
    }
}
