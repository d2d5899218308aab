internal import COpenSSL

/// OpenSSL's thread-local error queue as text: every TLS failure PresigndIO reports drains it, so a later
/// failure on the same thread never carries an earlier one's errors.
public enum OpenSSLError {
    /// Every queued error, oldest first, joined with "; " ("unknown error" when the queue is empty).
    public static func drain() -> String {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            messages.append(describe(code))
        }
        return messages.isEmpty ? "unknown error" : messages.joined(separator: "; ")
    }

    /// One error code as OpenSSL spells it (`error:0A000086:SSL routines::certificate verify failed`).
    public static func describe(_ code: UInt) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Empties the queue without reading it (after calls whose failure is not an error, such as `SSL_shutdown`
    /// on a connection the peer already closed).
    public static func clear() {
        ERR_clear_error()
    }
}
