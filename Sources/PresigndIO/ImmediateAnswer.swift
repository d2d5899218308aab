#if canImport(Glibc)
    import Glibc
#endif

/// Answers an accepted connection the process will not serve (over `max_connections`, issue 20) and closes it,
/// without an event or a buffer: the answer is small enough for any socket's send buffer.
public enum ImmediateAnswer {
    /// Drops what the client has sent so far, writes `bytes` as far as the socket takes them at once, half-closes,
    /// and closes `fd`. Reading first matters: closing a socket with unread input sends a reset, which can destroy
    /// the answer before the client reads it. Returns whether the whole answer was handed to the kernel; failures
    /// mean the client is gone already, and the descriptor is closed either way.
    @discardableResult
    public static func send(_ bytes: [UInt8], andClose fd: Int32) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<16 {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count <= 0 { break }
        }
        let sent = bytes.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        }
        _ = shutdown(fd, Int32(SHUT_WR))
        _ = close(fd)
        return sent == bytes.count
    }
}
