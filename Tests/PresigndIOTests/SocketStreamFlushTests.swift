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

    /// A stream over a socket pair with a recorder as its delegate, closed after `body`.
    private func withStream(_ body: (EventLoop, SocketStream, Int32, StreamRecorder) throws -> Void) throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        defer { stream.close() }
        let recorder = StreamRecorder()
        stream.delegate = recorder
        try body(loop, stream, peer, recorder)
    }

    /// Flushes and runs the loop until the peer has read `count` bytes and the output is empty; what it read.
    private func receive(_ count: Int, from stream: SocketStream, peer: Int32, loop: EventLoop) throws -> [UInt8] {
        var received: [UInt8] = []
        stream.flush()
        try runLoop(loop, milliseconds: 20_000) {
            drainSocket(peer, into: &received)
            return received.count >= count && stream.output.count == 0
        }
        return received
    }

    /// `write` sends at once when nothing is queued: the bytes reach the peer before any flush or loop turn, and
    /// the output stays empty.
    @Test func aWriteWithNothingQueuedIsSentAtOnce() throws {
        try withStream { _, stream, peer, _ in
            let head = pattern(700, seed: 7)
            try stream.write(head)
            #expect(stream.output.count == 0)
            var received: [UInt8] = []
            _ = drainSocket(peer, into: &received)
            #expect(sameBytes(received, head))
        }
    }

    /// Bytes already queued go first: a write behind them is queued, not sent past them.
    @Test func aWriteBehindQueuedBytesKeepsTheOrder() throws {
        try withStream { loop, stream, peer, _ in
            let (first, second) = (pattern(300, seed: 8), pattern(900, seed: 9))
            try stream.output.append(first)
            try stream.write(second)
            #expect(stream.output.count == first.count + second.count)
            #expect(sameBytes(try receive(1200, from: stream, peer: peer, loop: loop), first + second))
        }
    }

    /// More than the socket takes: the rest is queued, and later writes queue behind it; the peer reads every
    /// byte once, in order.
    @Test func aWriteLargerThanTheSocketQueuesTheRestInOrder() throws {
        try withStream { loop, stream, peer, recorder in
            let (big, after) = (pattern(3_000_000, seed: 10), pattern(5000, seed: 11))
            try stream.write(big)
            #expect(stream.output.count > 0)  // the socket pair's buffer holds far less than 3 MB
            #expect(stream.output.count < big.count)  // but it took something at once
            try stream.write(after)
            #expect(sameBytes(try receive(big.count + after.count, from: stream, peer: peer, loop: loop), big + after))
            #expect(recorder.ends.isEmpty)
        }
    }

    /// A peer that no longer reads: the write queues what it could not send and the failure comes as any write's does.
    @Test func aWriteToAClosedPeerEndsTheStreamAsAReset() throws {
        try withStream { loop, stream, peer, recorder in
            shutdown(peer, Int32(SHUT_RDWR))  // gone for reading (closed by `withStream`, once)
            try stream.write(pattern(100, seed: 12))
            #expect(stream.output.count == 100)
            stream.flush()
            try runLoop(loop, milliseconds: 5000) { !recorder.ends.isEmpty }
            #expect(recorder.ends == [.reset])
        }
    }
}
