import Testing

@testable import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// Small reads land in the loop's `ReadBlock`, lent to the input by reference: the block is free again only when
/// the last of its bytes is drained, wherever they went, and a read while it is lent takes a chain as before.
@Suite(.serialized)
struct ReadBlockTests {
    private func send(_ fd: Int32, _ bytes: [UInt8]) {
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        #expect(sent == bytes.count)
    }

    /// A reading stream on one end of a socket pair; the other end is the peer that sends. The stream holds its
    /// delegate unowned: each test keeps the recorder alive (`withExtendedLifetime`) until it closes the peer.
    private func readingStream() throws -> (
        loop: EventLoop, stream: SocketStream, recorder: StreamRecorder, peer: Int32
    ) {
        let loop = try EventLoop(lockless: true)
        let (left, peer) = socketPair()
        let stream = try SocketStream(loop: loop, fd: left, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        stream.enableReading()
        return (loop, stream, recorder, peer)
    }

    @Test func aReadWhileTheBlockIsLentTakesAChainAndOrderHolds() throws {
        let (loop, stream, recorder, peer) = try readingStream()
        defer { withExtendedLifetime(recorder) { _ = close(peer) } }
        let first = pattern(700, seed: 1)
        let second = pattern(900, seed: 2)
        send(peer, first)
        #expect(try runLoop(loop) { recorder.readable >= 1 })
        #expect(loop.readBlock.isLent)  // the first read's bytes are the block's, not drained yet
        send(peer, second)
        #expect(try runLoop(loop) { stream.input.count == first.count + second.count })
        #expect(stream.input.copyOut(stream.input.count) == first + second)
        stream.input.drain(first.count - 1)
        #expect(loop.readBlock.isLent)  // one byte of it is still buffered
        stream.input.drain(1)
        #expect(!loop.readBlock.isLent)
        #expect(stream.input.copyOut(stream.input.count) == second)
        stream.close()
    }

    @Test func bytesMovedOnKeepTheBlockUntilTheyAreDrainedThere() throws {
        let (loop, stream, recorder, peer) = try readingStream()
        defer { withExtendedLifetime(recorder) { _ = close(peer) } }
        let message = pattern(1200, seed: 3)
        send(peer, message)
        #expect(try runLoop(loop) { stream.input.count == message.count })
        let elsewhere = try OwnedIOBuffer()
        try elsewhere.buffer.append(takingAllOf: stream.input)
        #expect(stream.input.count == 0)
        #expect(loop.readBlock.isLent)
        // A read meanwhile does not touch the lent bytes.
        let next = pattern(300, seed: 4)
        send(peer, next)
        #expect(try runLoop(loop) { stream.input.count == next.count })
        #expect(stream.input.copyOut(next.count) == next)
        #expect(elsewhere.buffer.copyOut(message.count) == message)
        elsewhere.buffer.drain(message.count)
        #expect(!loop.readBlock.isLent)
        stream.close()
    }

    @Test func aStreamThatGoesWithLentBytesReleasesTheBlock() throws {
        var setup: (loop: EventLoop, stream: SocketStream, recorder: StreamRecorder, peer: Int32)? =
            try readingStream()
        guard let loop = setup?.loop, let recorder = setup?.recorder, let peer = setup?.peer else { return }
        defer { withExtendedLifetime(recorder) { _ = close(peer) } }
        send(peer, pattern(100, seed: 5))
        #expect(try runLoop(loop) { recorder.readable >= 1 })
        #expect(loop.readBlock.isLent)
        setup?.stream.close()
        setup = nil  // the last reference to the stream: its buffers go, the lent bytes with them
        #expect(!loop.readBlock.isLent)
    }
}
