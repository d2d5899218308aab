import PresigndSigV4

/// `[token.NAME]` tables (issue 19 §5): `file` holds a bearer token; a request presenting it
/// (`Authorization: Bearer …`) is the principal `token:NAME`.
extension ConfigLoader {
    static let tokenKeys = ["file"]

    /// The tokens by name, read now (first line, trailing newlines dropped); a reload reads them again.
    static func decodeTokens(_ reader: TableReader, configPath: String) -> [String: Secret] {
        var tokens: [String: Secret] = [:]
        guard let table = reader.table("token") else { return tokens }
        for name in table.keys {
            guard let value = table[name], case .table(let tokenTable) = value.kind else {
                if let value = table[name] {
                    reader.mismatch("token.\(name)", value, expected: "a table [token.\(name)]")
                }
                continue
            }
            let tokenReader = reader.reader(for: tokenTable, context: "[token.\(name)]", knownKeys: tokenKeys)
            defer { tokenReader.reportUnknownKeys() }
            guard let file = tokenReader.string("file") else {
                reader.diagnostics.error(
                    "[token.\(name)] needs file = \"/path/to/token\" (the bearer token, one line)",
                    at: tokenTable.position)
                continue
            }
            switch FileReader.read(FileReader.resolve(file.value, relativeTo: configPath), limit: 4096) {
            case .failure(let error):
                reader.diagnostics.error(
                    "cannot read [token.\(name)] file '\(file.value)': \(error.reason)", at: file.position)
            case .success(var contents):
                while contents.hasSuffix("\n") || contents.hasSuffix("\r") { contents.removeLast() }
                guard contents.utf8.count >= 16, !contents.contains("\n") else {
                    reader.diagnostics.error(
                        "[token.\(name)] file '\(file.value)' must hold one token of at least 16 characters",
                        at: file.position)
                    continue
                }
                tokens[name] = Secret(contents)
            }
        }
        return tokens
    }
}
