#if canImport(Glibc)
    import Glibc
#endif

/// How much of what was sent the peer has taken: the rate a slow reader is judged by (`min_body_rate`, issue 20).
extension SocketStream {
    /// `tcpi_bytes_acked` in the kernel's `struct tcp_info` (linux/tcp.h, Linux 4.1 and later). glibc's own
    /// `struct tcp_info` stops before it, and the two headers cannot be included together, so the field is read
    /// at its offset in the kernel's layout, which only ever grows at its end.
    static let bytesAckedOffset = 120

    /// Bytes of this connection the peer's TCP has acknowledged, from `TCP_INFO`: what the client has taken,
    /// however much the kernel's send buffer holds in between (up to megabytes on loopback, released to presignd
    /// in steps of a third of it). Nil when the socket is not TCP (a unix listener's) or the kernel does not report
    /// the field.
    public var bytesAcknowledged: Int? {
        withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            var length = socklen_t(buffer.count)
            guard getsockopt(fd, Int32(SOL_TCP), TCP_INFO, base, &length) == 0,
                Int(length) >= Self.bytesAckedOffset + 8
            else { return nil }
            let acked = UnsafeRawBufferPointer(buffer).loadUnaligned(
                fromByteOffset: Self.bytesAckedOffset, as: UInt64.self)
            return Int(truncatingIfNeeded: acked)
        }
    }
}
