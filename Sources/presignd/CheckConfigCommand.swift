import PresigndConfig
import PresigndProxy

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
            let resources = ProxyMain.resourceReport(configuration)
            if let error = resources.error {
                Console.err("\(path): \(error)")
                Console.err("presignd: configuration file \(path) test failed")
                return ExitCode.config
            }
            for warning in resources.warnings { Console.err("\(path): warning: \(warning)") }
            Console.out("presignd: configuration file \(path) test is successful")
            Console.out(summary(configuration))
            Console.out(resources.lines.map { "  " + $0 }.joined(separator: "\n"))
            return ExitCode.ok
        }
    }

    /// Listeners, upstreams and buckets, one per line; credential sources but never credentials.
    static func summary(_ configuration: Configuration) -> String {
        let server = configuration.server
        var lines = ["listen: " + server.listen.map(\.description).joined(separator: ", ")]
        lines.append("admin_listen: " + (server.adminListen?.description ?? "off"))
        if let presign = server.presignAPISummary { lines.append(presign) }
        for name in configuration.upstreamNames {
            guard let upstream = configuration.upstreams[name] else { continue }
            lines.append(
                "upstream \(name): provider \(upstream.provider.rawValue), endpoint \(upstream.endpoint), "
                    + "region \(upstream.region), credentials from "
                    + (upstream.refreshingCredentials.map { source in
                        if case .r2Temporary = source { return "\(source) (minted when running, not now)" }
                        return "\(source) (fetched when running, not now)"
                    }
                        ?? upstream.credentials.source))
            // The chain as the SDKs would walk it, from configuration alone (issue 22: shown without fetching).
            if case .chain(let chain)? = upstream.refreshingCredentials {
                for step in chain.steps { lines.append("  chain \(step)") }
            }
        }
        for bucket in configuration.buckets {
            var line =
                "bucket \(bucket.name): mount \(bucket.mount), upstream \(bucket.upstream), \(bucket.access.rawValue)"
            // The policy beyond `access`, so `check-config` shows what a bucket grants (issue 19).
            if !bucket.allowedActions.isEmpty {
                line += ", plus " + bucket.allowedActions.map(\.text).joined(separator: " ")
            }
            if !bucket.deniedActions.isEmpty {
                line += ", minus " + bucket.deniedActions.map(\.text).joined(separator: " ")
            }
            if !bucket.allowedPrefixes.isEmpty { line += ", prefixes " + bucket.allowedPrefixes.joined(separator: " ") }
            if !bucket.allow.isEmpty { line += ", allow " + bucket.allow.map(\.description).joined(separator: " ") }
            lines.append(line)
        }
        lines += cacheSummary(configuration)
        return lines.map { "  " + $0 }.joined(separator: "\n")
    }

    /// One line per cache directory: its cap and the buckets sharing it, with their slice size and revalidation.
    static func cacheSummary(_ configuration: Configuration) -> [String] {
        configuration.cacheDirectories.map { directory in
            let details = configuration.buckets.compactMap { bucket in
                bucket.cache.flatMap { cache in
                    cache.directory != directory.path
                        ? nil
                        : "\(bucket.name) (slice \(ByteSize.format(cache.sliceSize)), revalidate after "
                            + "\(cache.revalidateAfter))"
                }
            }
            return "cache \(directory.path): max_size \(ByteSize.format(directory.maxSize)), buckets "
                + details.joined(separator: ", ")
        }
    }
}
