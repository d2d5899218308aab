#if canImport(Glibc)
    import Glibc
#endif

/// One-line-per-event logger on stderr, in logfmt or JSON, shaped like swift-log:
/// `logger.info("Listening", metadata: ["listen.address": "127.0.0.1:8080"])`.
/// Messages are constants; values go in dot-named metadata. Secrets never reach it: callers
/// pass only redacted types' descriptions.
public struct Logger: Sendable {
    /// Severity, lowest first.
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        var name: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// Output format.
    public enum Format: Sendable { case logfmt, json }

    public var minimumLevel: Level
    public var format: Format
    /// Prefix each line with an RFC 3339 timestamp (off under journald, which stamps lines itself).
    public var includesTimestamp: Bool

    public init(minimumLevel: Level = .info, format: Format = .logfmt, includesTimestamp: Bool? = nil) {
        self.minimumLevel = minimumLevel
        self.format = format
        // journald sets JOURNAL_STREAM for services whose stderr it captures.
        self.includesTimestamp = includesTimestamp ?? (getenv("JOURNAL_STREAM") == nil)
    }

    public func debug(_ message: String, metadata: KeyValuePairs<String, String> = [:]) {
        log(.debug, message, metadata)
    }
    public func info(_ message: String, metadata: KeyValuePairs<String, String> = [:]) {
        log(.info, message, metadata)
    }
    public func warning(_ message: String, metadata: KeyValuePairs<String, String> = [:]) {
        log(.warning, message, metadata)
    }
    public func error(_ message: String, metadata: KeyValuePairs<String, String> = [:]) {
        log(.error, message, metadata)
    }

    public func log(_ level: Level, _ message: String, _ metadata: KeyValuePairs<String, String>) {
        guard level >= minimumLevel else { return }
        log(level, message, pairs: metadata.map { ($0.key, $0.value) })
    }

    public func log(_ level: Level, _ message: String, pairs metadata: [(String, String)]) {
        guard level >= minimumLevel else { return }
        var line = ""
        line.reserveCapacity(160)
        switch format {
        case .logfmt:
            if includesTimestamp { line += "ts=" + Self.timestamp() + " " }
            line += "level=" + level.name + " msg=" + Self.logfmtValue(message)
            for (key, value) in metadata { line += " " + key + "=" + Self.logfmtValue(value) }
        case .json:
            line += "{"
            if includesTimestamp { line += "\"ts\":" + JSONText.quoted(Self.timestamp()) + "," }
            line += "\"level\":" + JSONText.quoted(level.name) + ",\"msg\":" + JSONText.quoted(message)
            for (key, value) in metadata { line += "," + JSONText.quoted(key) + ":" + JSONText.quoted(value) }
            line += "}"
        }
        line += "\n"
        line.withUTF8 { buffer in
            // One write(2) per line keeps lines from different threads whole.
            _ = Glibc.write(2, buffer.baseAddress, buffer.count)
        }
    }

    /// Quotes a logfmt value when it holds spaces, quotes, `=` or control characters.
    static func logfmtValue(_ value: String) -> String {
        var needsQuotes = value.isEmpty
        for byte in value.utf8 where byte <= 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "=")
            || byte == UInt8(ascii: "\\") || byte == 0x7F
        {
            needsQuotes = true
            break
        }
        return needsQuotes ? JSONText.quoted(value) : value
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2) + "T"
            + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2) + "."
            + pad(Int32(now.tv_nsec / 1_000_000), 3) + "Z"
    }
}

/// Minimal JSON string quoting (RFC 8259 §7).
public enum JSONText {
    public static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = Array("0123456789abcdef".unicodeScalars)
                    out += "\\u00"
                    out.unicodeScalars.append(hex[Int(scalar.value >> 4)])
                    out.unicodeScalars.append(hex[Int(scalar.value & 0xF)])
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
