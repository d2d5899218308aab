#if canImport(Glibc)
    import Glibc
#endif

/// `credential_process`: a command that prints credentials as the AWS CLI's JSON version 1 (with `Expiration`
/// for temporary keys), run at start and again before they expire. Its stdout carries secrets and is never
/// logged; its stderr is logged.
public struct CredentialProcessConfig: Sendable, Hashable, CustomStringConvertible {
    /// The program (resolved: absolute, or found on `PATH` when the loader checked it) and its arguments,
    /// split from the configured string as a POSIX shell would split words (quotes, backslashes), never run
    /// through a shell.
    public var arguments: [String]
    /// `credential_process_timeout`: the process is killed when it has not exited by then. Default 30 s.
    public var timeout: ConfigDuration = .seconds(30)

    public init(arguments: [String]) {
        self.arguments = arguments
    }

    /// The program's path, for logs and `check-config` (arguments may hold secrets: never shown).
    public var description: String { "credential_process \(arguments.first ?? "")" }

    /// Splits `text` into words: whitespace separates, `'…'` is literal, `"…"` keeps spaces and takes `\"` and
    /// `\\`, a backslash outside quotes escapes the next character. Nil for an unterminated quote or escape.
    public static func split(_ text: String) -> [String]? {
        var words: [String] = []
        var word = ""
        var inWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                while true {
                    guard let next = iterator.next() else { return nil }
                    if next == "'" { break }
                    word.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard var next = iterator.next() else { return nil }
                    if next == "\"" { break }
                    if next == "\\" {
                        guard let escaped = iterator.next() else { return nil }
                        if escaped != "\"" && escaped != "\\" { word.append("\\") }
                        next = escaped
                    }
                    word.append(next)
                }
            case "\\":
                guard let escaped = iterator.next() else { return nil }
                word.append(escaped)
                inWord = true
            default:
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// `program` as it will be run: a path with a `/` relative to the configuration's directory, a bare name
    /// looked up in `PATH`; nil when nothing executable is there.
    static func locate(_ program: String, configPath: String, environment: [String: String]) -> String? {
        if program.contains("/") {
            let path = FileReader.resolve(program, relativeTo: configPath)
            return access(path, X_OK) == 0 ? path : nil
        }
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") where !directory.isEmpty {
            let candidate = directory + "/" + program
            if access(candidate, X_OK) == 0 { return String(candidate) }
        }
        return nil
    }
}

extension CredentialProcessConfig {
    static let keys = ["credential_process", "credential_process_timeout"]

    /// Reads `credential_process` (and its timeout) from an upstream table; nil with errors reported when it is
    /// malformed, combined with other credential keys, or names nothing executable.
    static func decode(reader: TableReader, configPath: String, environment: [String: String])
        -> CredentialProcessConfig?
    {
        let diagnostics = reader.diagnostics
        guard let command = reader.string("credential_process") else { return nil }
        var failed = false
        for key in CredentialResolver.keys where reader.contains(key) {
            diagnostics.error(
                "\(key) cannot be combined with credential_process (one credential source per upstream)",
                at: reader.keyPosition(key))
            failed = true
        }
        guard let words = split(command.value), let program = words.first else {
            diagnostics.error(
                "credential_process must be a command line (program and arguments; quotes must be closed)",
                at: command.position)
            return nil
        }
        guard let located = locate(program, configPath: configPath, environment: environment) else {
            diagnostics.error(
                "credential_process program '\(program)' is not an executable file"
                    + (program.contains("/") ? " (relative paths are relative to the configuration file)" : " on PATH"),
                at: command.position)
            return nil
        }
        var config = CredentialProcessConfig(arguments: [located] + words.dropFirst())
        if let timeout = reader.duration(
            "credential_process_timeout", in: ConfigDuration(milliseconds: 100)...ConfigDuration.minutes(10))
        {
            config.timeout = timeout
        }
        return failed ? nil : config
    }
}
