import PresigndProxy

/// `presignd run --config PATH`: serve until SIGTERM/SIGINT (the default subcommand).
enum RunCommand {
    static let usage = """
        Usage: presignd run [--config PATH]

        Runs the signing proxy in the foreground. Logs go to stderr (logfmt by default).
        Signals: SIGTERM/SIGINT drain and exit 0; SIGHUP reloads the configuration (a bad
        file is reported and the running configuration keeps serving).

        Options:
          --config PATH   configuration file (default: /etc/presignd/presignd.toml,
                          or $PRESIGND_CONFIG when set)
          -h, --help      show this help

        Exit codes: 0 clean shutdown, 64 usage, 71 cannot listen, 78 configuration error.
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
        let environment = processEnvironment()
        let path = parsed.value("config") ?? environment["PRESIGND_CONFIG"] ?? "/etc/presignd/presignd.toml"
        return ProxyMain.run(configPath: path, environment: environment)
    }
}
