import PresigndIO
import PresigndTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `IOBuffer.appendFile`: file bytes sent from a stream's output without being read into the process (the read
/// cache's slices, issue 23).
@Suite(.serialized)
struct IOBufferFileTests {
    /// A file of `bytes`, already unlinked: only the descriptor names it (an evicted slice being sent).
    func unlinkedFile(_ bytes: [UInt8], in scratch: TemporaryDirectory) throws -> Int32 {
        let path = scratch.path + "/slice"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        #expect(unlink(path) == 0)
        return fd
    }

    /// A stream on one end of a loopback TCP pair, and the other end (for the caller to close).
    func tcpStream() throws -> (loop: EventLoop, stream: SocketStream, peer: Int32) {
        let loop = try EventLoop(lockless: true)
        let (left, right) = try tcpPair()
        do {
            return (loop, try SocketStream(loop: loop, fd: left, maxRead: 64 * 1024), right)
        } catch {
            close(right)
            throw error
        }
    }

    @Test func aStreamSendsFilePiecesBetweenMemoryBytesInOrderAndClosesTheirDescriptors() throws {
        let scratch = try TemporaryDirectory()
        let file = pattern(3 * 1024 * 1024 + 11, seed: 5)
        let first = try unlinkedFile(file, in: scratch)
        let second = dup(first)
        // Held to the end: the file's inode stays allocated, so no other file (of a test running in parallel) can
        // have its number when `first` or `second` is looked at below.
        let kept = dup(first)
        defer { close(kept) }
        var fileStat = stat()
        #expect(fstat(first, &fileStat) == 0)
        let loop = try EventLoop(lockless: true)
        let (left, right) = socketPair()
        defer { close(right) }
        let stream = try SocketStream(loop: loop, fd: left, maxRead: 64 * 1024)
        try stream.output.append(Array("head\r\n".utf8))
        try stream.appendFile(descriptor: first, offset: 100, length: 2 * 1024 * 1024)
        try stream.output.append(Array("mid".utf8))
        try stream.appendFile(descriptor: second, offset: file.count - 11, length: 11)
        let expected =
            Array("head\r\n".utf8) + file[100..<(100 + 2 * 1024 * 1024)] + Array("mid".utf8)
            + file[(file.count - 11)...]
        #expect(stream.output.count == expected.count)
        var received: [UInt8] = []
        _ = try runLoop(loop, milliseconds: 20_000) {
            stream.flush()
            drainSocket(right, into: &received)
            return received.count >= expected.count
        }
        #expect(received == expected)
        #expect(stream.output.count == 0)
        // Sent and drained: libevent closed both descriptors (a parallel suite may have the numbers again, for
        // another file: never this one, which `kept` holds open).
        for descriptor in [first, second] {
            var now = stat()
            #expect(fstat(descriptor, &now) != 0 || now.st_ino != fileStat.st_ino || now.st_dev != fileStat.st_dev)
        }
    }

    /// A head and a small file body: the head goes with `MSG_MORE` (held for the body, one segment), and the
    /// socket is never left corked (a corked socket would hold a later answer's last segment for 200 ms).
    /// Loopback delivers both writes before the peer reads either, so the segmentation itself is not what this
    /// can see.
    @Test func aHeadAndASmallFileArriveWholeAndTheSocketIsNotLeftCorked() throws {
        let scratch = try TemporaryDirectory()
        let file = pattern(1024, seed: 9)
        let (_, stream, right) = try tcpStream()
        defer { close(right) }
        let left = stream.fd
        for round in 0..<3 {
            let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 1024\r\nx-round: \(round)\r\n\r\n".utf8)
            try stream.output.append(head)
            try stream.appendFile(descriptor: try unlinkedFile(file, in: scratch), offset: 0, length: file.count)
            stream.flush()
            #expect(stream.output.count == 0)
            var corked: Int32 = -1
            var size = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(left, Int32(SOL_TCP), TCP_CORK, &corked, &size) == 0 && corked == 0)
            var ready = pollfd(fd: right, events: Int16(POLLIN), revents: 0)
            #expect(poll(&ready, 1, 10_000) == 1)
            var buffer = [UInt8](repeating: 0, count: 65536)
            let got = buffer.withUnsafeMutableBytes { recv(right, $0.baseAddress, $0.count, 0) }
            #expect(got == head.count + file.count, "round \(round): read \(got) bytes")
            #expect(Array(buffer[..<max(got, 0)]) == head + file)
        }
    }

    /// Bytes before a file piece larger than the scratch copy and than the socket takes at once, in several
    /// appends, then the file, twice over (two pipelined answers): the head is sent with `MSG_MORE` across
    /// several calls and full sockets, and everything arrives once, in order.
    @Test func aLargeHeadBeforeAFileArrivesInOrderOverTCPWhenTheSocketFills() throws {
        let scratch = try TemporaryDirectory()
        let file = pattern(300_000, seed: 3)
        let (loop, stream, right) = try tcpStream()
        defer { close(right) }
        var expected: [UInt8] = []
        for answer in 0..<2 {
            for piece in 0..<40 {
                let bytes = pattern(50_000, seed: answer * 100 + piece)
                try stream.output.append(bytes)
                expected += bytes
            }
            try stream.appendFile(
                descriptor: try unlinkedFile(file, in: scratch), offset: answer * 1000, length: 200_000)
            expected += file[(answer * 1000)..<(answer * 1000 + 200_000)]
        }
        var received: [UInt8] = []
        _ = try runLoop(loop, milliseconds: 20_000) {
            stream.flush()
            drainSocket(right, into: &received)
            return received.count >= expected.count
        }
        #expect(received.count == expected.count)
        #expect(received == expected)
        #expect(stream.output.count == 0)
    }

    @Test func aPlainBufferMapsTheFileAndCopiesOutTheSameBytes() throws {
        let scratch = try TemporaryDirectory()
        let file = pattern(200_000, seed: 9)
        let owned = try OwnedIOBuffer()
        try owned.buffer.appendFile(descriptor: try unlinkedFile(file, in: scratch), offset: 65536, length: 1000)
        #expect(owned.buffer.copyOut(2000) == Array(file[65536..<66536]))
    }
}
