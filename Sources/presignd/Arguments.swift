#if canImport(Glibc)
    import Glibc
#endif

/// A usage mistake on the command line: printed with the subcommand's usage, exit 64.
struct UsageError: Error {
    var message: String
}

/// Exit codes, sysexits(3) style. Only `main` decides which one the process ends with.
enum ExitCode {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let software: Int32 = 70
    static let osError: Int32 = 71
    static let config: Int32 = 78
}

/// Hand-written option parsing: `--name value`, `--name=value`, boolean `--flag`, repeatable options,
/// and positionals. `--` ends options.
struct Arguments {
    private(set) var options: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - arguments: the arguments after the subcommand name.
    ///   - valued: option names (without `--`) that take a value.
    ///   - flags: option names that take none. `help` is always accepted.
    init(_ arguments: [String], valued: Set<String>, flags allowedFlags: Set<String>) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" {
                flags.insert("help")
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError(message: "unknown option '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String? = nil
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if valued.contains(name) {
                if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else if index < arguments.count {
                    options[name, default: []].append(arguments[index])
                    index += 1
                } else {
                    throw UsageError(message: "option '--\(name)' needs a value")
                }
            } else if allowedFlags.contains(name) || name == "help" {
                guard inlineValue == nil else {
                    throw UsageError(message: "option '--\(name)' takes no value")
                }
                flags.insert(name)
            } else {
                throw UsageError(message: "unknown option '--\(name)'")
            }
        }
    }

    /// The last value given for an option.
    func value(_ name: String) -> String? { options[name]?.last }

    /// Every value given for a repeatable option, in order.
    func values(_ name: String) -> [String] { options[name] ?? [] }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// Writes to stdout/stderr without Foundation (Swift 6 cannot reference C `stderr`).
enum Console {
    static func out(_ text: String) { write(fd: 1, text + "\n") }
    static func err(_ text: String) { write(fd: 2, text + "\n") }

    static func write(fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}

/// The process environment as a dictionary (no Foundation `ProcessInfo`).
func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let pair = String(cString: entry)
        if let equals = pair.firstIndex(of: "=") {
            result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        pointer += 1
    }
    return result
}
