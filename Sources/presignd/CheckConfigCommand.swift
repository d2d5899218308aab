import PresigndConfig

/// `presignd check-config [--config PATH]`: loads the configuration like `run` would and reports, like `nginx -t`.
/// Exit 0 when it loads, 78 (EX_CONFIG) with every error on stderr when it does not, 64 on a usage mistake.
enum CheckConfigCommand {
    static let usage = """
        Usage: presignd check-config [--config PATH]

        Validate a configuration file and print a summary (secrets are never printed).

        Options:
          --config PATH   configuration file (default: \(ConfigLoader.defaultPath))
          -h, --help      print this help

        Exit status: 0 valid, 78 invalid, 64 usage error.
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let parsed = PresigndCommand.parse(
                arguments, usage: usage, valued: ["config"], flags: [], exitCode: &exitCode)
        else { return exitCode }
        guard parsed.positionals.isEmpty else {
            Console.err("presignd: unexpected argument '\(parsed.positionals[0])'\n\n\(usage)")
            return ExitCode.usage
        }
        let path = parsed.value("config") ?? ConfigLoader.defaultPath
        switch ConfigLoader.load(path: path, environment: processEnvironment()) {
        case .failure(let errors):
            for error in errors.errors { Console.err(error.description) }
            Console.err("presignd: configuration file \(path) test failed")
            return ExitCode.config
        case .success(let configuration):
            for warning in configuration.warnings { Console.err(warning.description) }
            Console.out("presignd: configuration file \(path) test is successful")
            Console.out(summary(configuration))
            return ExitCode.ok
        }
    }

    /// Listeners, upstreams and buckets, one per line; credential sources but never credentials.
    static func summary(_ configuration: Configuration) -> String {
        let server = configuration.server
        var lines = ["listen: " + server.listen.map(\.description).joined(separator: ", ")]
        lines.append("admin_listen: " + (server.adminListen?.description ?? "off"))
        for name in configuration.upstreamNames {
            guard let upstream = configuration.upstreams[name] else { continue }
            lines.append(
                "upstream \(name): provider \(upstream.provider.rawValue), endpoint \(upstream.endpoint), "
                    + "region \(upstream.region), credentials from "
                    + (upstream.refreshingCredentials.map { "\($0) (fetched when running, not now)" }
                        ?? upstream.credentials.source))
        }
        for bucket in configuration.buckets {
            lines.append(
                "bucket \(bucket.name): mount \(bucket.mount), upstream \(bucket.upstream), \(bucket.access.rawValue)")
        }
        return lines.map { "  " + $0 }.joined(separator: "\n")
    }
}
