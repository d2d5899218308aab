/// One problem found in a configuration file, printed as `FILE:LINE:COL: error: MESSAGE` (the format editors and
/// compilers use, so terminals make it clickable).
///
/// Messages name keys and describe values but never quote a value that could be a secret.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Whether the problem stops the configuration from loading.
    public enum Severity: String, Sendable, Hashable {
        /// The configuration is rejected.
        case error
        /// The configuration loads; the operator should know (e.g. TLS verification turned off).
        case warning
    }

    /// The configuration file's path as given to the loader.
    public var file: String
    /// 1-based line; 0 when the error concerns the whole file (e.g. it cannot be read).
    public var line: Int
    /// 1-based column; 0 when `line` is 0.
    public var column: Int
    /// What is wrong, lowercase, without a trailing period.
    public var message: String
    public var severity: Severity

    public init(file: String, line: Int, column: Int, message: String, severity: Severity = .error) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.severity = severity
    }

    /// An error at a position in `file`.
    public init(file: String, position: SourcePosition, message: String, severity: Severity = .error) {
        self.init(file: file, line: position.line, column: position.column, message: message, severity: severity)
    }

    /// The line and column as a value (0:0 for whole-file errors).
    public var position: SourcePosition { SourcePosition(line: line, column: column) }

    public var description: String {
        if line > 0 {
            return "\(file):\(line):\(column): \(severity.rawValue): \(message)"
        }
        return "\(file): \(severity.rawValue): \(message)"
    }
}
