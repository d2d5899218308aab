internal import CLibevent
internal import COpenSSL
import PresigndOpenSSL

#if canImport(Glibc)
    import Glibc
#endif

extension BufferEvent {
    /// What a bufferevent event means for the owner. TLS errors come from libevent's per-bufferevent queue (it
    /// moves OpenSSL's queue there, mixed with `SSL_get_error` codes) and from what OpenSSL still queues.
    func classify(_ events: Int32, errno code: Int32) -> StreamEnd {
        if events & Int32(BEV_EVENT_TIMEOUT) != 0 {
            return events & Int32(BEV_EVENT_WRITING) != 0 ? .writeTimeout : .readTimeout
        }
        var messages: [String] = []
        var sawSyscallError = false
        while case let error = bufferevent_get_openssl_error(bev), error != 0 {
            if error == UInt(SSL_ERROR_SYSCALL) {
                sawSyscallError = true
            } else if error > UInt(SSL_ERROR_WANT_CLIENT_HELLO_CB) {
                messages.append(OpenSSLError.describe(error))
            }
        }
        messages += OpenSSLError.drain("TLS").reasons
        if !isOpen {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                return .failed(
                    "certificate verification failed: " + String(cString: X509_verify_cert_error_string(verify)))
            }
        }
        let isPeerAbort = code == ECONNRESET || code == EPIPE
        if events & Int32(BEV_EVENT_EOF) != 0 {
            // A dirty shutdown counts as EOF, and libevent reports a reset the same way: errno tells them apart.
            return sawSyscallError && isPeerAbort ? .reset : .endOfFile
        }
        if isPeerAbort && (sawSyscallError || messages.isEmpty) { return .reset }
        if !messages.isEmpty { return .failed(messages.joined(separator: "; ")) }
        if code != 0 { return .failed(IOError.text(errno: code)) }
        return .failed("TLS connection failed")
    }
}
