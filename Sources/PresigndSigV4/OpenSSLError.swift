internal import COpenSSL

/// Drains OpenSSL's thread-local error queue into a `SigV4Error.crypto` (STYLE: every C call's result is
/// checked and turned into a typed error).
enum OpenSSLError {
    static func drain(_ operation: String) -> SigV4Error {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            buffer.withUnsafeMutableBufferPointer { pointer in
                ERR_error_string_n(code, pointer.baseAddress, pointer.count)
            }
            messages.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return .crypto(messages.isEmpty ? operation : operation + ": " + messages.joined(separator: "; "))
    }
}
