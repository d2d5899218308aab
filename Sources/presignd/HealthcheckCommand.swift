#if canImport(Glibc)
    import Glibc
#endif

/// `presignd healthcheck [--admin HOST:PORT] [--path /readyz]`: exit 0 when the admin listener
/// answers 200, else 1. For Docker's HEALTHCHECK (the runtime image has no curl).
enum HealthcheckCommand {
    static let usage = """
        Usage: presignd healthcheck [--admin HOST:PORT] [--path PATH] [--timeout SECONDS]

        Asks the admin listener for PATH (default /readyz) and exits 0 on 200, 1 otherwise.

        Options:
          --admin HOST:PORT   admin listener (default 127.0.0.1:9180)
          --path PATH         /readyz (default) or /healthz
          --timeout SECONDS   give up after this long (default 3)
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let parsed = PresigndCommand.parse(
                arguments, usage: usage, valued: ["admin", "path", "timeout"], flags: [], exitCode: &exitCode)
        else { return exitCode }
        let admin = parsed.value("admin") ?? "127.0.0.1:9180"
        let path = parsed.value("path") ?? "/readyz"
        guard let timeout = Int(parsed.value("timeout") ?? "3"), timeout > 0 else {
            Console.err("presignd: --timeout must be a positive number of seconds")
            return ExitCode.usage
        }
        guard let colon = admin.lastIndex(of: ":"), let port = Int(admin[admin.index(after: colon)...]) else {
            Console.err("presignd: --admin must be HOST:PORT")
            return ExitCode.usage
        }
        var host = String(admin[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let status = fetchStatus(host: host, port: port, path: path, timeoutSeconds: timeout) else {
            Console.err("presignd: healthcheck: no answer from \(admin)")
            return ExitCode.failure
        }
        guard status == 200 else {
            Console.err("presignd: healthcheck: \(admin)\(path) answered \(status)")
            return ExitCode.failure
        }
        return ExitCode.ok
    }

    /// A blocking HTTP/1.1 GET returning the status code.
    static func fetchStatus(host: String, port: Int, path: String, timeoutSeconds: Int) -> Int? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else { return nil }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return nil }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        let sent = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        guard sent > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let received = recv(fd, &buffer, buffer.count, 0)
        guard received >= 12 else { return nil }
        // "HTTP/1.1 200 ..."
        let line = String(decoding: buffer[0..<received], as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }
}
