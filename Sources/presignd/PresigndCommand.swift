/// Top-level dispatch: `presignd [SUBCOMMAND] [OPTIONS]`; `run` is the default.
enum PresigndCommand {
    static let version = "0.1.0"

    static let usage = """
        Usage: presignd [SUBCOMMAND] [OPTIONS]

        A signing proxy for S3-compatible storage (Cloudflare R2, AWS S3, MinIO).

        Subcommands:
          run            run the proxy (default)               presignd run --config PATH
          check-config   validate a configuration, like nginx -t
          sign           print every SigV4 stage for a request (signature doctor)
          presign        mint a presigned URL
          explain        show how the access policy judges a request (operation, keys, decision, rule)
          mint           mint scoped R2 temporary credentials locally
          credentials    fetch the upstreams' credentials once and show where from (no secrets)
          cache          stats or purge the read cache's directories (offline)
          healthcheck    probe the admin listener (for Docker HEALTHCHECK)
          version        print the version
          help           print this help

        Run 'presignd SUBCOMMAND --help' for a subcommand's options.
        """

    static func main(_ arguments: [String]) -> Int32 {
        var arguments = arguments
        var subcommand = "run"
        if let first = arguments.first, !first.hasPrefix("-") {
            subcommand = first
            arguments.removeFirst()
        } else if arguments.first == "--help" || arguments.first == "-h" {
            subcommand = "help"
        } else if arguments.first == "--version" {
            subcommand = "version"
        }
        switch subcommand {
        case "run": return RunCommand.main(arguments)
        case "check-config": return CheckConfigCommand.main(arguments)
        case "sign": return SignCommand.main(arguments)
        case "presign": return PresignCommand.main(arguments)
        case "explain": return ExplainCommand.main(arguments)
        case "mint": return MintCommand.main(arguments)
        case "credentials": return CredentialsCommand.main(arguments)
        case "cache": return CacheCommand.main(arguments)
        case "healthcheck": return HealthcheckCommand.main(arguments)
        case "version":
            Console.out("presignd \(version)")
            return ExitCode.ok
        case "help":
            Console.out(usage)
            return ExitCode.ok
        default:
            Console.err("presignd: unknown subcommand '\(subcommand)'\n\n\(usage)")
            return ExitCode.usage
        }
    }

    /// Parses options for a subcommand, printing usage on `--help` or a mistake.
    /// Returns nil with `exitCode` set when the subcommand should stop.
    static func parse(
        _ arguments: [String], usage: String, valued: Set<String>, flags: Set<String>, exitCode: inout Int32
    ) -> Arguments? {
        do {
            let parsed = try Arguments(arguments, valued: valued, flags: flags)
            if parsed.has("help") {
                Console.out(usage)
                exitCode = ExitCode.ok
                return nil
            }
            return parsed
        } catch {
            Console.err("presignd: \(error.message)\n\n\(usage)")
            exitCode = ExitCode.usage
            return nil
        }
    }
}
