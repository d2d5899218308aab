import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How a `SocketStream` tells an orderly close from an abort, and how it aborts itself.
@Suite(.serialized)
struct SocketStreamEndTests {
    @Test func anOrderlyCloseIsEndOfFileAndWritingGoesOn() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = try tcpPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        recorder.received = []
        recorder.stream = stream
        stream.delegate = recorder
        stream.enableReading()
        #expect(write(peer, "last", 4) == 4)
        #expect(shutdown(peer, Int32(SHUT_WR)) == 0)
        try runLoop(loop) { !recorder.ends.isEmpty }
        #expect(recorder.received == Array("last".utf8))
        #expect(recorder.ends == [.endOfFile])
        #expect(!stream.isReading)
        // Half-closed: the answer still goes out.
        try stream.output.append("answer")
        stream.flush()
        var received: [UInt8] = []
        try runLoop(loop, milliseconds: 2000) {
            drainSocket(peer, into: &received)
            return received.count == 6
        }
        #expect(received == Array("answer".utf8))
    }

    @Test func aPeerThatResetsIsReset() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = try tcpPair()
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        stream.enableReading()
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        #expect(setsockopt(peer, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
        close(peer)
        try runLoop(loop) { !recorder.ends.isEmpty }
        #expect(recorder.ends == [.reset])
    }

    @Test func writingToAResetPeerIsReportedOnTheNextRound() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = try tcpPair()
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        #expect(setsockopt(peer, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
        close(peer)
        usleep(20_000)  // the RST reaches the loopback socket
        try stream.output.append("too late")
        stream.flush()
        // Never inside the owner's own call.
        #expect(recorder.ends.isEmpty)
        try runLoop(loop) { !recorder.ends.isEmpty }
        #expect(recorder.ends == [.reset])
    }

    @Test func resetMakesThePeerSeeConnectionReset() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = try tcpPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        try stream.output.append("partial body")
        stream.flush()
        stream.reset()
        #expect(stream.isClosed)
        var buffer = [UInt8](repeating: 0, count: 64)
        var result = 0
        var code: Int32 = 0
        // The bytes sent before the reset may or may not be read first; then the reset.
        for _ in 0..<200 {
            result = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            code = errno
            if result < 0 && code == EAGAIN {
                usleep(5000)
                continue
            }
            if result <= 0 { break }
        }
        #expect(result == -1)
        #expect(code == ECONNRESET)
    }

    @Test func closeIsQuietAndIdempotent() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        stream.enableReading()
        stream.close()
        stream.close()
        try runLoop(loop, for: 30)
        #expect(recorder.ends.isEmpty)
        #expect(recorder.readable == 0)
        // The peer sees an orderly close.
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) } == 0)
    }

    @Test func theOwnerMayCloseTheStreamInsideItsCallback() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        var stream: SocketStream? = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        recorder.onReadable = {
            stream?.close()
            stream = nil  // the last reference goes inside the stream's own callback
        }
        stream?.delegate = recorder
        stream?.enableReading()
        #expect(write(peer, "x", 1) == 1)
        try runLoop(loop) { stream == nil }
        try runLoop(loop, for: 20)
        #expect(recorder.readable == 1)
    }
}
