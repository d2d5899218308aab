internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// Reading: one read per read event, its size adapting to the traffic; over TLS through `readTLS`.
extension SocketStream {
    // MARK: Reading

    /// One receive into the reserved vectors: `recv` for one (the common case), `recvmsg` for two.
    /// Not `readv`: on a socket that goes through the VFS layer (file position lock, iovec import,
    /// permission hooks), measured ~0.2 µs a call more than `recv` on this machine kind.
    @inline(__always)
    static func receive(_ fd: Int32, _ vector: UnsafeMutablePointer<iovec>, count: Int) -> Int {
        if count == 1 { return recv(fd, vector[0].iov_base, vector[0].iov_len, 0) }
        var message = msghdr()
        message.msg_iov = vector
        message.msg_iovlen = count
        return recvmsg(fd, &message, 0)
    }

    /// What one read gave: bytes, end of file, or a failure.
    enum ReadOutcome {
        case bytes(Int)
        case endOfFile
        case wouldBlock
        case failed(StreamEnd)

        /// How reading ended.
        init(_ end: StreamEnd) {
            self = end == .endOfFile ? .endOfFile : .failed(end)
        }
    }

    func readOnce() -> ReadOutcome {
        let want = readSize
        if want <= readBlock.capacity && !readBlock.isLent {
            // A small read lands in the loop's block, lent to the input (`ReadBlock`: no chain allocated).
            let got = readBlock.fill(input, count: want) { [fd] in recv(fd, $0, $1, 0) }
            if got > 0 { return .bytes(got) }
            if got == 0 { return .endOfFile }
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return .wouldBlock }
            return .failed(Self.end(errno: code))
        }
        var vectors = (iovec(), iovec())
        return withUnsafeMutablePointer(to: &vectors) { pair in
            pair.withMemoryRebound(to: iovec.self, capacity: 2) { vector -> ReadOutcome in
                let count = evbuffer_reserve_space(input.pointer, want, vector, 2)
                guard count > 0 else {
                    return .failed(.failed(IOError.outOfMemory("evbuffer_reserve_space").description))
                }
                let got = Self.receive(fd, vector, count: Int(count))
                if got == 0 { return .endOfFile }
                if got < 0 {
                    let code = errno
                    if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return .wouldBlock }
                    return .failed(Self.end(errno: code))
                }
                // Trim the reservation to what arrived before committing.
                var remaining = got
                for index in 0..<Int(count) {
                    let used = min(remaining, vector[index].iov_len)
                    vector[index].iov_len = used
                    remaining -= used
                }
                let used = count > 1 && vector[1].iov_len > 0 ? 2 : 1
                guard evbuffer_commit_space(input.pointer, vector, Int32(used)) == 0 else {
                    return .failed(.failed("evbuffer_commit_space failed"))
                }
                return .bytes(got)
            }
        }
    }

    func handleReadable() {
        if let ssl, !tlsEventIsForData(ssl, readable: true) { return }
        guard reading else { return }
        let outcome =
            if let ssl { readTLS(ssl) } else { readOnce() }
        switch outcome {
        case .bytes(let got):
            // Adapt the next reservation: grow while reads fill it, shrink for small messages.
            if got >= readSize {
                readSize = min(maxRead, readSize * 2)
            } else if got < readSize / 4 {
                readSize = max(Self.minRead, readSize / 2)
            }
            // The read timeout counts from the last byte (an idle timeout).
            if readDeadline != 0 { restartReadDeadline() }
            owner?.streamReadable()
        case .wouldBlock:
            return
        case .endOfFile:
            disableReading()
            report(.endOfFile)
        case .failed(let end):
            disableReading()
            report(end)
        }
    }
}
