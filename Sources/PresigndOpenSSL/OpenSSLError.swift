internal import COpenSSL

/// A failed OpenSSL call and what OpenSSL's error queue said about it: the one error type for libcrypto and
/// libssl, for every module that calls them (STYLE: every C call's result is checked and turned into a typed
/// error, OpenSSL's error queue drained into it).
public struct OpenSSLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call or step that failed (`SHA256_Init`, `SSL_CTX_new`, `cannot load ca_file /etc/ca.pem`).
    public var operation: String
    /// The queue's entries, oldest first, as `ERR_error_string_n` writes them
    /// (`error:80000002:system library::No such file or directory`).
    public var reasons: [String]

    public init(operation: String, reasons: [String] = []) {
        self.operation = operation
        self.reasons = reasons
    }

    /// Empties the calling thread's error queue into an error for `operation`. Call it right after the failed
    /// call: the queue is per thread and keeps what earlier calls left in it.
    public static func drain(_ operation: String) -> OpenSSLError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 { reasons.append(describe(code)) }
        return OpenSSLError(operation: operation, reasons: reasons)
    }

    /// The text of one packed error code from the thread's queue.
    public static func describe(_ code: UInt) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            ERR_error_string_n(code, buffer.baseAddress, buffer.count)  // always NUL-terminates
            return String(cString: buffer.baseAddress!)
        }
    }

    /// Empties the calling thread's queue without reading it (after calls whose failure is not an error, such as
    /// `SSL_shutdown` on a connection the peer already closed, and before each `SSL_read`/`SSL_write`, whose
    /// `SSL_get_error` needs an empty queue). An empty queue is left alone: `ERR_peek_error` reads two indices,
    /// while `ERR_clear_error` rewrites all sixteen slots (about 750 instructions and a dozen cache lines, twice
    /// per proxied request over TLS).
    public static func clear() {
        guard ERR_peek_error() != 0 else { return }
        ERR_clear_error()
    }

    /// `operation: reason; reason`, or the operation alone when the queue held nothing.
    public var description: String {
        reasons.isEmpty ? operation : operation + ": " + reasons.joined(separator: "; ")
    }
}
