#if canImport(Glibc)
    import Glibc
#endif

/// File pieces in a stream's output (the read cache's slices, issue 23): queued without reading them, sent with
/// `sendfile`.
extension SocketStream {
    /// Appends `length` bytes of the file open as `descriptor`, from `offset`, to the output without reading them:
    /// sent with `sendfile`, after what the output holds. Takes the descriptor (closed once sent, or on failure).
    public func appendFile(descriptor: Int32, offset: Int, length: Int) throws(IOError) {
        guard ssl == nil else {
            Glibc.close(descriptor)
            throw .eventLoop("file pieces are sent on plain sockets only")
        }
        let afterHead = !sendsFiles && output.count > 0
        try output.appendFile(descriptor: descriptor, offset: offset, length: length)
        if afterHead { corksNextWrite = true }
        sendsFiles = true
    }

    /// `writeOut` while file pieces are queued: libevent's own writer, which sends a file chain with `sendfile`
    /// and stops a `writev` before one.
    ///
    /// When a file follows bytes in memory (an answer's head), the socket is corked (`TCP_CORK`, nginx's
    /// `tcp_nopush`) for the call: the head's `writev` and the `sendfile` after it leave in full segments, so a
    /// small answer is one segment and wakes its client once, not a head segment and then a body segment.
    /// Uncorking at the end sends what is left at once. Later calls (file after file) need no cork. A socket that
    /// is not TCP (a unix listener's) refuses the option, which changes nothing.
    func writeOutWithFiles(_ pending: Int) -> (remaining: Int, errno: Int32) {
        let corked = corksNextWrite
        corksNextWrite = false
        if corked { Self.setCork(fd, true) }
        defer { if corked { Self.setCork(fd, false) } }
        var remaining = pending
        while remaining > 0 {
            let sent: Int
            do {
                sent = try output.write(to: fd)
            } catch {
                if case .system(_, let code) = error { return (remaining, code) }
                return (remaining, EIO)
            }
            guard sent > 0 else { break }  // the socket is full
            remaining -= sent
        }
        if remaining == 0 { sendsFiles = false }
        return (remaining, 0)
    }

    private static func setCork(_ fd: Int32, _ on: Bool) {
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(fd, Int32(SOL_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }
}
