import PresigndHTTP1

/// The AWS shared credentials file (`~/.aws/credentials`): INI sections of `aws_access_key_id`,
/// `aws_secret_access_key` and `aws_session_token`.
struct SharedCredentialsFile {
    /// Keys of each profile, lower-cased, values trimmed.
    private(set) var profiles: [String: [String: String]] = [:]

    /// Parses `[name]` (or `[profile name]`, as in `~/.aws/config`) sections of `key = value` lines; `#` and `;`
    /// start comment lines.
    init(text: String) {
        var current: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = Self.trimmed(Substring(rawLine))
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                var name = Self.trimmed(line.dropFirst().dropLast())
                if name.hasPrefix("profile ") { name = Self.trimmed(name.dropFirst(8)) }
                current = String(name)
                profiles[String(name), default: [:]] = profiles[String(name)] ?? [:]
                continue
            }
            guard let profile = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = ASCII.lowercased(String(Self.trimmed(line[..<equals])))
            profiles[profile, default: [:]][key] = String(Self.trimmed(line[line.index(after: equals)...]))
        }
    }

    static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
        return text
    }

    /// The default location: `$AWS_SHARED_CREDENTIALS_FILE`, else `$HOME/.aws/credentials`.
    static func defaultPath(environment: [String: String]) -> String? {
        if let path = environment["AWS_SHARED_CREDENTIALS_FILE"], !path.isEmpty { return path }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.aws/credentials" }
        return nil
    }
}
