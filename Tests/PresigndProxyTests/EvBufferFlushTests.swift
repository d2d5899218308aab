import CLibevent
import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// `EvBuffer.flushNow` writes a bufferevent's output itself (`send`, one coalesced copy, or
/// `sendmsg`): whatever the output's shape, the peer must receive every byte once and in order.
@Suite(.serialized)
struct EvBufferFlushTests {
    /// Flushes `pieces` (each its own evbuffer chain) through a socket pair and returns what the peer read.
    private func flushThrough(pieces: [[UInt8]]) throws -> [UInt8] {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        #expect(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) == 0)
        #expect(fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK) == 0)
        let loop = try EventLoop(lockless: true)
        let bev = try #require(bufferevent_socket_new(loop.base, fds[0], Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)))
        defer { bufferevent_free(bev) }
        let output = try #require(bufferevent_get_output(bev))
        // As a client connection starts: both directions driven by hand, write event off.
        bufferevent_disable(bev, Int16(EV_READ | EV_WRITE))
        for piece in pieces {
            // A buffer of its own per piece: moving it over keeps the piece a separate chain.
            let chain = evbuffer_new()!
            EvBuffer.add(chain, piece)
            evbuffer_add_buffer(output, chain)
            evbuffer_free(chain)
        }
        let total = pieces.reduce(0) { $0 + $1.count }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var rounds = 0
        var writeEnabled = false
        while received.count < total {
            rounds += 1
            try #require(rounds < 10_000, "no progress")
            _ = EvBuffer.flushNow(bev, output: output, fd: fds[0], writeEnabled: &writeEnabled)
            while true {
                let got = buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
                if got <= 0 { break }
                received.append(contentsOf: buffer[..<got])
            }
        }
        #expect(EvBuffer.length(output) == 0)
        #expect(EvBuffer.flushNow(bev, output: output, fd: fds[0], writeEnabled: &writeEnabled) == .empty)
        #expect(!writeEnabled)
        #expect(Int32(bufferevent_get_enabled(bev)) & Int32(EV_WRITE) == 0)
        return received
    }

    private func pattern(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7) }
    }

    @Test func onePieceArrivesWhole() throws {
        let piece = pattern(1500, seed: 1)
        #expect(try flushThrough(pieces: [piece]) == piece)
    }

    @Test func smallPiecesAreCoalescedInOrder() throws {
        // A response head and a small body: under the coalescing limit, sent as one copy.
        let pieces = [pattern(350, seed: 2), pattern(1024, seed: 3), pattern(5, seed: 4)]
        #expect(try flushThrough(pieces: pieces) == Array(pieces.joined()))
    }

    @Test func manyPiecesPastTheVectorLimitArriveInOrder() throws {
        // More chains than one write takes (64 vectors) and more bytes than the socket buffer holds.
        let pieces = (0..<150).map { pattern(4096 + $0, seed: $0) }
        #expect(try flushThrough(pieces: pieces) == Array(pieces.joined()))
    }

    @Test func largePiecesArriveInOrder() throws {
        // Bulk-body pieces, together larger than the socket buffer.
        let pieces = [pattern(200_000, seed: 5), pattern(300_000, seed: 6)]
        #expect(try flushThrough(pieces: pieces) == Array(pieces.joined()))
    }
}
