/// Collects the errors and warnings of one load, so every decoder can report and carry on.
final class Diagnostics {
    let file: String
    private(set) var errors: [ConfigError] = []
    private(set) var warnings: [ConfigError] = []

    init(file: String) {
        self.file = file
    }

    func error(_ message: String, at position: SourcePosition) {
        errors.append(ConfigError(file: file, position: position, message: message))
    }

    func warning(_ message: String, at position: SourcePosition) {
        warnings.append(ConfigError(file: file, position: position, message: message, severity: .warning))
    }

    func append(_ parseErrors: [ConfigError]) {
        errors += parseErrors
    }

    /// Errors so far; decoders compare before and after to know whether their part is usable.
    var errorCount: Int { errors.count }
}

/// A decoded value and where it was written.
struct Located<Value> {
    var value: Value
    var position: SourcePosition
}
