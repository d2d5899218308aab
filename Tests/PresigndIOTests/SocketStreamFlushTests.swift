import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `SocketStream.flush()` writes the output itself (`send`, one coalesced copy, or `sendmsg`): whatever the
/// output's shape, the peer must receive every byte once and in order. (These were EvBuffer.flushNow's tests.)
@Suite(.serialized)
struct SocketStreamFlushTests {
    /// Flushes `pieces` (each its own chain) through a socket pair, reading between rounds, and returns what the
    /// peer read.
    private func flushThrough(pieces: [[UInt8]]) throws -> [UInt8] {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        for piece in pieces {
            // A buffer of its own per piece: moving it over keeps the piece a separate chain.
            let chain = try OwnedIOBuffer()
            try chain.buffer.append(piece)
            try stream.output.append(takingAllOf: chain.buffer)
        }
        let total = pieces.reduce(0) { $0 + $1.count }
        var received: [UInt8] = []
        stream.flush()
        try runLoop(loop, milliseconds: 20_000) {
            drainSocket(peer, into: &received)
            return received.count >= total && stream.output.count == 0
        }
        #expect(stream.output.count == 0)
        #expect(recorder.ends.isEmpty)
        return received
    }

    @Test func onePieceArrivesWhole() throws {
        let piece = pattern(1500, seed: 1)
        #expect(sameBytes(try flushThrough(pieces: [piece]), piece))
    }

    @Test func smallPiecesAreCoalescedInOrder() throws {
        // A response head and a small body: under the coalescing limit, sent as one copy.
        let pieces = [pattern(350, seed: 2), pattern(1024, seed: 3), pattern(5, seed: 4)]
        #expect(sameBytes(try flushThrough(pieces: pieces), Array(pieces.joined())))
    }

    @Test func manyPiecesPastTheVectorLimitArriveInOrder() throws {
        // More chains than one write takes (64 vectors) and more bytes than the socket buffer holds.
        let pieces = (0..<150).map { pattern(4096 + $0, seed: $0) }
        #expect(sameBytes(try flushThrough(pieces: pieces), Array(pieces.joined())))
    }

    @Test func largePiecesArriveInOrder() throws {
        // Bulk-body pieces, together larger than the socket buffer.
        let pieces = [pattern(200_000, seed: 5), pattern(300_000, seed: 6)]
        #expect(sameBytes(try flushThrough(pieces: pieces), Array(pieces.joined())))
    }

    /// `write` sends at once when nothing is queued: the bytes reach the peer before any flush or loop turn, and
    /// the output stays empty.
    @Test func aWriteWithNothingQueuedIsSentAtOnce() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let head = pattern(700, seed: 7)
        try stream.write(head)
        #expect(stream.output.count == 0)
        var received: [UInt8] = []
        _ = drainSocket(peer, into: &received)
        #expect(sameBytes(received, head))
        stream.close()
    }

    /// Bytes already queued go first: a write behind them is queued, not sent past them.
    @Test func aWriteBehindQueuedBytesKeepsTheOrder() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let first = pattern(300, seed: 8)
        let second = pattern(900, seed: 9)
        try stream.output.append(first)
        try stream.write(second)
        #expect(stream.output.count == first.count + second.count)
        var received: [UInt8] = []
        stream.flush()
        try runLoop(loop, milliseconds: 20_000) {
            drainSocket(peer, into: &received)
            return received.count >= first.count + second.count && stream.output.count == 0
        }
        #expect(sameBytes(received, first + second))
        stream.close()
    }

    /// More than the socket takes: the rest is queued, and later writes queue behind it; the peer reads every
    /// byte once, in order.
    @Test func aWriteLargerThanTheSocketQueuesTheRestInOrder() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        let big = pattern(3_000_000, seed: 10)
        let after = pattern(5000, seed: 11)
        try stream.write(big)
        #expect(stream.output.count > 0)  // the socket pair's buffer holds far less than 3 MB
        #expect(stream.output.count < big.count)  // but it took something at once
        try stream.write(after)
        stream.flush()
        var received: [UInt8] = []
        try runLoop(loop, milliseconds: 20_000) {
            drainSocket(peer, into: &received)
            return received.count >= big.count + after.count && stream.output.count == 0
        }
        #expect(sameBytes(received, big + after))
        #expect(recorder.ends.isEmpty)
        stream.close()
    }

    /// A peer that is gone: the write queues what it could not send and the failure comes as any write's does.
    @Test func aWriteToAClosedPeerEndsTheStreamAsAReset() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        close(peer)
        try stream.write(pattern(100, seed: 12))
        #expect(stream.output.count == 100)
        stream.flush()
        try runLoop(loop, milliseconds: 5000) { !recorder.ends.isEmpty }
        #expect(recorder.ends == [.reset])
        stream.close()
    }
}
