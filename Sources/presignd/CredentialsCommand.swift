import PresigndConfig
import PresigndProxy

/// `presignd credentials`: fetches each upstream's credentials once, as the daemon would, and prints where they
/// came from, the key id's last four characters and the expiry (never a secret). Exit 0 when every fetch worked.
enum CredentialsCommand {
    static let usage = """
        Usage: presignd credentials [--config PATH] [--upstream NAME]

        Fetches the upstreams' credentials once (runs credential_process, asks the container or instance
        metadata endpoint; static keys are read) and prints the provider, the key id's last four characters and
        the expiry. Secrets are never printed.

          --config PATH    configuration file (default: \(ConfigLoader.defaultPath))
          --upstream NAME  only this upstream

        Exit status: 0 every fetch worked, 1 one failed, 64 usage error, 78 configuration error.
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let options = PresigndCommand.parse(
                arguments, usage: usage, valued: ["config", "upstream"], flags: [], exitCode: &exitCode)
        else { return exitCode }
        guard options.positionals.isEmpty else {
            Console.err("presignd credentials: unexpected argument '\(options.positionals[0])'\n\n\(usage)")
            return ExitCode.usage
        }
        let path = options.value("config") ?? ConfigLoader.defaultPath
        let configuration: Configuration
        switch ConfigLoader.load(path: path, environment: processEnvironment()) {
        case .failure(let errors):
            SigningTargets.report(ConfigFailure(errors: errors), command: "credentials")
            return ExitCode.config
        case .success(let loaded):
            configuration = loaded
        }
        var names = configuration.upstreamNames
        if let wanted = options.value("upstream") {
            guard names.contains(wanted) else {
                Console.err(
                    "presignd credentials: no [upstream.\(wanted)] in \(path) (have: \(names.joined(separator: ", ")))")
                return ExitCode.usage
            }
            names = [wanted]
        }
        var status = ExitCode.ok
        for name in names {
            guard let upstream = configuration.upstreams[name] else { continue }
            switch CredentialCheck.fetchOnce(upstream) {
            case .success(let report):
                Console.out(
                    "upstream \(name): provider \(report.provider) (\(report.source)), key \(report.keyHint), "
                        + "expires \(report.expiresAt ?? "never")")
            case .failure(let error):
                Console.out("upstream \(name): FAILED: \(error.message)")
                status = ExitCode.failure
            }
        }
        return status
    }
}
