import PresigndConfig
import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// `presignd explain`: what the policy makes of one request: operation, keys, bucket, principal, decision
/// and the rule that decided (issue 19 §7). Nothing is sent anywhere.
enum ExplainCommand {
    static let usage = """
        Usage: presignd explain --config PATH [--as WHO] [-H 'Name: value']... [--body FILE] METHOD URL

        Prints the S3 operation the request is, the keys it touches, its bucket, the principal, the decision and
        the rule that decided it, exactly as the proxy would judge it. Nothing is sent.

          URL                /bucket/key?query, or http://host/bucket/key?query (its host becomes Host)
          --config PATH      the configuration to judge by
          --as WHO           uid:1000 (unix peer; its primary group from the user database), uid:1000/gid:50,
                             an IP address (a TCP peer), token:NAME; default: the invoking user on a unix socket
          -H, --header H     a request header, 'Name: value' (repeatable)
          --body FILE        the request body (DeleteObjects: the keys it names are checked)

        Exit status: 0 allowed, 1 denied, 64 usage error, 78 configuration error.
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        let rewritten = arguments.map { $0 == "-H" ? "--header" : $0 }
        guard
            let options = PresigndCommand.parse(
                rewritten, usage: usage, valued: ["config", "as", "header", "body"], flags: [], exitCode: &exitCode)
        else { return exitCode }
        do {
            guard let path = options.value("config") else { throw UsageError(message: "--config is required") }
            guard options.positionals.count == 2 else { throw UsageError(message: "give METHOD and URL") }
            let principal = try principal(options.value("as"))
            var headers: [(String, String)] = []
            for header in options.values("header") {
                guard let colon = header.firstIndex(of: ":") else {
                    throw UsageError(message: "header '\(header)' is not 'Name: value'")
                }
                headers.append(
                    (String(header[..<colon]), String(header[header.index(after: colon)...].drop(while: { $0 == " " })))
                )
            }
            var body: [UInt8]? = nil
            if let file = options.value("body") {
                switch FileReader.read(file) {
                case .success(let text): body = Array(text.utf8)
                case .failure(let error): throw UsageError(message: "--body \(file): \(error.reason)")
                }
            }
            let configuration: Configuration
            switch ConfigLoader.load(path: path, environment: processEnvironment()) {
            case .failure(let errors):
                for error in errors.errors { Console.err(error.description) }
                Console.err("presignd explain: configuration errors")
                return ExitCode.config
            case .success(let loaded): configuration = loaded
            }
            let result = try PolicyExplainer.explain(
                configuration: configuration, principal: principal, method: options.positionals[0],
                target: options.positionals[1], headers: headers, body: body)
            Console.out(result.lines.joined(separator: "\n"))
            return result.isAllowed ? ExitCode.ok : ExitCode.failure
        } catch let error as UsageError {
            Console.err("presignd explain: \(error.message)\n\n\(usage)")
            return ExitCode.usage
        } catch {
            Console.err("presignd explain: \(error)")
            return ExitCode.config
        }
    }

    /// `--as`: whom to judge the request as.
    static func principal(_ text: String?) throws(UsageError) -> Principal {
        guard let text else { return Principal(peer: .unix(uid: getuid(), gid: getgid(), pid: getpid())) }
        if text.hasPrefix("token:") { return Principal(peer: .unknown, token: String(text.dropFirst(6))) }
        if let address = IPAddress(text) { return Principal(peer: .tcp(address)) }
        let parts = text.split(separator: "/")
        guard parts.first?.hasPrefix("uid:") == true, let uid = UInt32(parts[0].dropFirst(4)) else {
            throw UsageError(message: "--as must be uid:N, uid:N/gid:M, an IP address or token:NAME, got '\(text)'")
        }
        var gid = getpwuid(uid).map { UInt32($0.pointee.pw_gid) } ?? uid
        if parts.count == 2 {
            guard parts[1].hasPrefix("gid:"), let value = UInt32(parts[1].dropFirst(4)) else {
                throw UsageError(message: "--as: expected uid:N/gid:M, got '\(text)'")
            }
            gid = value
        }
        return Principal(peer: .unix(uid: uid, gid: gid, pid: 0))
    }
}
