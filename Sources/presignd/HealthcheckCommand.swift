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
        guard let status = AdminClient.get(host: host, port: port, path: path, timeoutSeconds: timeout)?.status else {
            Console.err("presignd: healthcheck: no answer from \(admin)")
            return ExitCode.failure
        }
        guard status == 200 else {
            Console.err("presignd: healthcheck: \(admin)\(path) answered \(status)")
            return ExitCode.failure
        }
        return ExitCode.ok
    }
}
