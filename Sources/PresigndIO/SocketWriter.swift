internal import CLibevent
internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// Sends from the start of an `IOBuffer` without draining it, the cheapest way for the buffer's shape.
enum SocketWriter {
    /// Up to this many pending bytes in several pieces are copied into one per-thread buffer and sent with
    /// `send`: a small response's head and body (two chains) cost one copy of ~1 KiB, cheaper than
    /// the iovec import of `sendmsg`/`writev`.
    static let coalesceLimit = Int(PRESIGND_SEND_SCRATCH_BYTES)
    /// Pieces one `sendmsg` takes at most (libevent's writev takes 128; a bulk body's pieces are 16-512 KiB).
    static let maxWriteVectors = 64

    /// `send` for one piece, one copied piece for a few small ones, `sendmsg` otherwise (not `writev`, which goes
    /// through the VFS layer); `MSG_NOSIGNAL` always, and `flags`. `upTo`: at most that many bytes from the
    /// buffer's start (nil: all it shows; a buffer with a file piece shows nothing past it, so the bytes before
    /// one are offered with their count). Returns what the socket took, or -1 (`errno` set; EAGAIN when it took
    /// nothing), and how much was offered.
    static func send(
        _ buffer: IOBuffer, fd: Int32, upTo limit: Int? = nil, flags: Int32 = 0
    ) -> (sent: Int, offered: Int) {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: maxWriteVectors) { vectors in
            guard let base = vectors.baseAddress else { return (0, 0) }
            // evbuffer_peek answers how many vectors the whole buffer needs, which may be more than it filled.
            var count = min(
                Int(evbuffer_peek(buffer.pointer, limit ?? -1, nil, base, Int32(maxWriteVectors))), maxWriteVectors)
            guard count > 0 else { return (0, 0) }
            var offered = 0
            for index in 0..<count {
                if let limit, offered + base[index].iov_len >= limit {
                    base[index].iov_len = limit - offered  // the last piece peeked may run past the limit
                    count = index + 1
                    offered = limit
                    break
                }
                offered += base[index].iov_len
            }
            let flags = flags | Int32(MSG_NOSIGNAL)
            if count == 1 { return (Glibc.send(fd, base[0].iov_base, base[0].iov_len, flags), base[0].iov_len) }
            if offered <= coalesceLimit, let (destination, filled) = coalesce(base, count: count) {
                return (Glibc.send(fd, destination, filled, flags), filled)
            }
            var message = msghdr()
            message.msg_iov = base
            message.msg_iovlen = count
            return (sendmsg(fd, &message, flags), offered)
        }
    }

    /// `SSL_write` from the start of `buffer` without draining it: its first piece, or up to `coalesceLimit`
    /// bytes of several small pieces copied into one (one TLS record, not one per piece), at least `atLeast`
    /// bytes (a retry offers what the call it repeats offered) and at most `atMost`. Returns what `SSL_write`
    /// returned and how much was offered.
    static func write(_ buffer: IOBuffer, ssl: OpaquePointer, atLeast: Int, atMost: Int) -> (written: Int, offered: Int) {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: maxWriteVectors) { vectors in
            guard let base = vectors.baseAddress else { return (0, 0) }
            let count = min(Int(evbuffer_peek(buffer.pointer, -1, nil, base, Int32(maxWriteVectors))), maxWriteVectors)
            guard count > 0 else { return (0, 0) }
            let first = base[0].iov_len
            // A retry's `atLeast` fits the first piece when that piece was offered alone (pieces only grow until
            // drained), and fits the scratch buffer when pieces were copied together.
            if first >= atLeast && (count == 1 || first >= coalesceLimit) {
                let offered = max(atLeast, min(first, atMost))
                return (Int(SSL_write(ssl, base[0].iov_base, Int32(clamping: offered))), offered)
            }
            guard let (destination, filled) = coalesce(base, count: count) else { return (0, 0) }
            return (Int(SSL_write(ssl, destination, Int32(filled))), filled)
        }
    }

    /// The first `coalesceLimit` bytes of `count` pieces copied into the thread's scratch buffer, and how many.
    private static func coalesce(
        _ pieces: UnsafeMutablePointer<iovec>, count: Int
    ) -> (UnsafeMutableRawPointer, Int)? {
        guard let scratch = presignd_send_scratch() else { return nil }
        let destination = UnsafeMutableRawPointer(scratch)
        var filled = 0
        for index in 0..<count where filled < coalesceLimit {
            guard let piece = pieces[index].iov_base else { continue }
            let length = min(pieces[index].iov_len, coalesceLimit - filled)
            (destination + filled).copyMemory(from: piece, byteCount: length)
            filled += length
        }
        return (destination, filled)
    }
}
