import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `SocketStream.bytesAcknowledged`: what the peer's TCP took (`min_body_rate` judges a response by it).
@Suite(.serialized)
struct SocketStreamAcknowledgedTests {
    @Test func countsWhatThePeerTookAndOnlyThat() throws {
        let loop = try EventLoop(lockless: true)
        let (client, server) = try tcpPair()
        defer { close(client) }
        let stream = try SocketStream(loop: loop, fd: server, maxRead: 65536)
        let before = try #require(stream.bytesAcknowledged)
        let sent = pattern(300_000, seed: 3)
        try stream.output.append(sent)
        stream.flush()
        var received: [UInt8] = []
        try runLoop(loop, milliseconds: 20_000) {
            drainSocket(client, into: &received)
            return received.count >= sent.count && (stream.bytesAcknowledged ?? 0) - before >= sent.count
        }
        #expect(received == sent)
        #expect(stream.bytesAcknowledged.map { $0 - before } == sent.count)
    }

    @Test func aUnixSocketHasNoCount() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        #expect(stream.bytesAcknowledged == nil)
    }
}
