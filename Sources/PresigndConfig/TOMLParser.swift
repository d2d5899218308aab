/// A parser for the TOML subset presignd's configuration uses: comments, `[table]` and `[a.b]` headers,
/// `[[array.of.tables]]`, bare, quoted and dotted keys, basic and literal strings, integers, booleans, arrays
/// (multi-line, trailing comma, comments inside) and inline tables.
///
/// Every value and key keeps its position. A mistake is reported with its `file:line:col`, and parsing resumes at
/// the next line (or, inside a multi-line array, at the next line that starts a new statement), so one pass finds
/// every error. Messages never quote the text of a value: it could be a secret.
public struct TOMLParser {
    let bytes: [UInt8]
    let file: String
    var index = 0
    var line = 1
    var lineStart = 0
    /// How many `[` / `{` of the current statement's value are open; decides how to recover from an error.
    var depth = 0
    var root = TOMLTable(origin: .root, position: .start)
    /// The table key/value lines go into; nil after a broken header, when lines are checked and then dropped.
    var currentPath: [TOMLKey]? = []
    var errors: [ConfigError] = []

    public init(text: String, file: String) {
        self.bytes = Array(text.utf8)
        self.file = file
    }

    /// Parses `text`, returning the root table (holding everything that parsed) and every error, in file order.
    public static func parse(_ text: String, file: String) -> (table: TOMLTable, errors: [ConfigError]) {
        var parser = TOMLParser(text: text, file: file)
        return parser.parse()
    }

    /// Parses the whole document. Call once.
    public mutating func parse() -> (table: TOMLTable, errors: [ConfigError]) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        while index < bytes.count {
            skipSpaces()
            guard let byte = peek() else { break }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                do { try consumeNewline() } catch {
                    record(error)
                    skipToNextLine()
                }
            case UInt8(ascii: "#"):
                skipComment()
            default:
                depth = 0
                do {
                    if byte == UInt8(ascii: "[") { try parseHeader() } else { try parseKeyValue() }
                    try expectEndOfLine()
                } catch {
                    record(error)
                    recover(insideBrackets: depth > 0)
                }
            }
        }
        return (root, errors)
    }

    mutating func record(_ failure: TOMLParseFailure) {
        errors.append(ConfigError(file: file, position: failure.position, message: failure.message))
    }

    /// Skips the rest of the broken line; inside an open array, also skips its remaining lines until one that
    /// starts a new statement (`key =` or a `[header]`), so a single mistake yields a single error.
    mutating func recover(insideBrackets: Bool) {
        skipToNextLine()
        guard insideBrackets else { return }
        while index < bytes.count {
            var probe = self
            if probe.startsStatement() { return }
            skipToNextLine()
        }
    }

    /// Whether the line at `index` is a key/value line or a table header (used on a throwaway copy).
    private mutating func startsStatement() -> Bool {
        skipSpaces()
        guard let byte = peek() else { return false }
        do {
            if byte == UInt8(ascii: "[") {
                advance()
                if peek() == UInt8(ascii: "[") { advance() }
                skipSpaces()
                _ = try parseKey()
                skipSpaces()
                return peek() == UInt8(ascii: "]")
            }
            _ = try parseKey()
            skipSpaces()
            return peek() == UInt8(ascii: "=")
        } catch {
            return false
        }
    }
}

/// A syntax error: where, and what.
struct TOMLParseFailure: Error {
    var position: SourcePosition
    var message: String

    init(_ position: SourcePosition, _ message: String) {
        self.position = position
        self.message = message
    }
}

/// One component of a (possibly dotted) key, with its position.
struct TOMLKey: Sendable {
    var name: String
    var position: SourcePosition
}
