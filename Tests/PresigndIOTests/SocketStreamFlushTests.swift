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
}
