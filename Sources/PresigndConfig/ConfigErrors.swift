/// Every error found in one configuration file, sorted by position; the loader reports them all in one pass.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    /// Errors in file order (whole-file errors first).
    public var errors: [ConfigError]

    public init(errors: [ConfigError]) {
        self.errors = errors.sorted { lhs, rhs in
            if lhs.file != rhs.file { return lhs.file < rhs.file }
            return lhs.position < rhs.position
        }
    }

    /// One `FILE:LINE:COL: error: MESSAGE` line per error.
    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
