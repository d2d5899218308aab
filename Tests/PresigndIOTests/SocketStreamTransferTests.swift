import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes through `SocketStream`: direct writes in `flush()`, the rest through the write event, reads into the
/// input buffer with the adaptive read size.
@Suite(.serialized)
struct SocketStreamTransferTests {
    @Test func largeTransfersArriveInOrderBothWays() throws {
        let loop = try EventLoop(lockless: true)
        let (left, right) = socketPair()
        let a = try SocketStream(loop: loop, fd: left, maxRead: 512 * 1024)
        let b = try SocketStream(loop: loop, fd: right, maxRead: 256 * 1024)
        let aRecorder = StreamRecorder()
        let bRecorder = StreamRecorder()
        aRecorder.received = []
        bRecorder.received = []
        aRecorder.stream = a
        bRecorder.stream = b
        a.delegate = aRecorder
        b.delegate = bRecorder
        let toB = pattern(6 * 1024 * 1024 + 17, seed: 1)
        let toA = pattern(5 * 1024 * 1024 + 3, seed: 2)
        try a.output.append(toB)
        try b.output.append(toA)
        a.enableReading()
        b.enableReading()
        a.flush()
        b.flush()
        try runLoop(loop, milliseconds: 20_000) {
            aRecorder.received?.count == toA.count && bRecorder.received?.count == toB.count
        }
        #expect(sameBytes(bRecorder.received, toB))
        #expect(sameBytes(aRecorder.received, toA))
        #expect(a.output.count == 0 && b.output.count == 0)
        #expect(aRecorder.ends.isEmpty && bRecorder.ends.isEmpty)
    }

    @Test func aPartialWriteLeavesTheRestToTheWriteEventAndReportsDrained() throws {
        let loop = try EventLoop(lockless: true)
        let (left, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: left, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        // Far above one write (a unix socket takes ~200 KiB at a time), so the fall past it is seen.
        stream.lowWatermark = 1024 * 1024
        let payload = pattern(4 * 1024 * 1024, seed: 3)
        try stream.output.append(payload)
        stream.flush()
        // The socket buffer holds far less than 4 MiB: the rest waits, and flush itself reports nothing.
        #expect(stream.output.count > 0)
        #expect(stream.output.count < payload.count)
        #expect(recorder.drained == 0)
        var received: [UInt8] = []
        try runLoop(loop, milliseconds: 20_000) {
            drainSocket(peer, into: &received)
            return received.count == payload.count && stream.output.count == 0 && recorder.drained >= 2
        }
        #expect(sameBytes(received, payload))
        // Once when output fell to the low watermark from above it, once when it emptied.
        #expect(recorder.drained == 2)
        #expect(recorder.ends.isEmpty)
    }

    @Test func flushWithNothingPendingReportsNothing() throws {
        let loop = try EventLoop(lockless: true)
        let (left, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: left, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        try stream.output.append("hello")
        stream.flush()
        #expect(stream.output.count == 0)
        try runLoop(loop, for: 50)
        #expect(recorder.drained == 0)
        var received: [UInt8] = []
        drainSocket(peer, into: &received)
        #expect(received == Array("hello".utf8))
    }

    @Test func theReadSizeGrowsForBulkInput() throws {
        // One read per readable event: a 4 MiB body in few callbacks shows the reservation grew past 4 KiB.
        let loop = try EventLoop(lockless: true)
        let (left, right) = socketPair()
        let writer = try SocketStream(loop: loop, fd: right, maxRead: 65536)
        let reader = try SocketStream(loop: loop, fd: left, maxRead: 512 * 1024)
        let recorder = StreamRecorder()
        recorder.received = []
        recorder.stream = reader
        reader.delegate = recorder
        let writerRecorder = StreamRecorder()
        writer.delegate = writerRecorder
        let payload = pattern(4 * 1024 * 1024, seed: 4)
        try writer.output.append(payload)
        writer.flush()
        reader.enableReading()
        try runLoop(loop, milliseconds: 20_000) { recorder.received?.count == payload.count }
        #expect(sameBytes(recorder.received, payload))
        #expect(recorder.readable < payload.count / 4096 / 2)
    }
}
