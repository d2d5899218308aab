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
        let before = sendsFiles ? 0 : output.count
        try output.appendFile(descriptor: descriptor, offset: offset, length: length)
        if before > 0 { bytesBeforeFile = before }
        sendsFiles = true
    }

    /// `writeOut` while file pieces are queued: libevent's own writer, which sends a file chain with `sendfile`
    /// and stops a `writev` before one.
    ///
    /// When a file follows bytes in memory (an answer's head), those bytes go first with `MSG_MORE`: the kernel
    /// holds them for what follows, and the `sendfile` after them sends both, so a small answer is one segment
    /// and wakes its client once, not a head segment and then a body segment. That is what `TCP_CORK` (nginx's
    /// `tcp_nopush`) around the writes would do, without its two `setsockopt` calls per answer. The flag is set
    /// only while bytes follow in the output: held bytes with nothing after them would wait for the next answer.
    /// A unix socket ignores the flag.
    func writeOutWithFiles(_ pending: Int) -> (remaining: Int, errno: Int32) {
        var remaining = pending
        while bytesBeforeFile > 0 {
            let more = remaining > bytesBeforeFile ? Int32(MSG_MORE) : 0
            let (sent, offered) = SocketWriter.send(output, fd: fd, upTo: bytesBeforeFile, flags: more)
            if sent < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return (remaining, 0) }
                return (remaining, code)
            }
            guard sent > 0 else { return (remaining, 0) }
            output.drain(sent)
            remaining -= sent
            bytesBeforeFile -= sent
            if sent < offered { return (remaining, 0) }  // the socket buffer is full
        }
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
}
