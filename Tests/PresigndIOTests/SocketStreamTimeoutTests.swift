import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The stream's timeouts are deadlines it keeps itself and arms its one timer for only when needed; these run a
/// real event loop over a socket pair and check when a timeout is reported (and that it is not while bytes flow).
@Suite(.serialized)
struct SocketStreamTimeoutTests {
    /// A reading stream over one end of a socket pair; `steps` run on the loop at the given times; the run ends at
    /// the first end event or after `limitMilliseconds`.
    private func run(
        timeout: Int, limitMilliseconds: Int = 3000,
        steps: [(at: Int, action: (SocketStream, Int32) -> Void)] = []
    ) throws -> StreamRecorder {
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let loop = try EventLoop(lockless: true)
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 256 * 1024)
        let recorder = StreamRecorder()
        recorder.received = []
        recorder.stream = stream
        stream.delegate = recorder
        stream.setTimeouts(readMilliseconds: timeout, writeMilliseconds: 0)
        stream.enableReading()
        let timers = try steps.map { step in
            let timer = try LoopTimer(loop: loop) { step.action(stream, peer) }
            try timer.schedule(milliseconds: step.at)
            return timer
        }
        try runLoop(loop, milliseconds: limitMilliseconds) { !recorder.ends.isEmpty }
        withExtendedLifetime((stream, timers)) {}
        return recorder
    }

    private static func send(_ fd: Int32) {
        var byte: UInt8 = 0x41
        #expect(write(fd, &byte, 1) == 1)
    }

    /// Coarse-clock slack: the deadline may come a few milliseconds early.
    private static let slack = 10

    @Test func aReadTimeoutFiresAfterInactivity() throws {
        let recorder = try run(timeout: 100)
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(elapsed >= 100 - Self.slack)
        #expect(elapsed < 1000)
        #expect(recorder.ends == [.readTimeout])
    }

    @Test func noReadTimeoutWhileBytesFlow() throws {
        // A byte every 40 ms for 400 ms against a 100 ms timeout: no timeout until the bytes stop.
        let steps = (1...10).map { index in
            (at: index * 40, action: { (_: SocketStream, peer: Int32) in Self.send(peer) })
        }
        let recorder = try run(timeout: 100, steps: steps)
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(recorder.received?.count == 10)
        #expect(elapsed >= 500 - Self.slack)  // 400 + 100: counted from the last byte
        #expect(recorder.ends == [.readTimeout])
    }

    @Test func aReadMovesTheDeadlineOn() throws {
        let recorder = try run(timeout: 150, steps: [(at: 100, action: { _, peer in Self.send(peer) })])
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(recorder.readable == 1)
        #expect(elapsed >= 250 - Self.slack)  // 100 + 150: counted from the read, not from the start
        #expect(elapsed < 1500)
    }

    @Test func aLongerTimeoutOutlivesTheArmedTimer() throws {
        // The timer armed for 100 ms fires first, finds the later deadline and waits for the rest.
        let recorder = try run(
            timeout: 100,
            steps: [(at: 50, action: { stream, _ in stream.setTimeouts(readMilliseconds: 400, writeMilliseconds: 0) })])
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(elapsed >= 450 - Self.slack)
        #expect(elapsed < 2000)
    }

    @Test func aShorterTimeoutArmsTheTimerAgain() throws {
        let recorder = try run(
            timeout: 2500,
            steps: [(at: 50, action: { stream, _ in stream.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0) })])
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(elapsed >= 150 - Self.slack)
        #expect(elapsed < 1000)
    }

    @Test func noReadTimeoutWhileNotReadingOrWithoutOne() throws {
        let disabled = try run(
            timeout: 100, limitMilliseconds: 400, steps: [(at: 20, action: { stream, _ in stream.disableReading() })])
        #expect(disabled.ends.isEmpty)
        let none = try run(
            timeout: 100, limitMilliseconds: 400,
            steps: [(at: 20, action: { stream, _ in stream.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0) })])
        #expect(none.ends.isEmpty)
    }

    @Test func reEnablingCountsTheTimeoutFromThen() throws {
        let recorder = try run(
            timeout: 100,
            steps: [
                (at: 20, action: { stream, _ in stream.disableReading() }),
                (at: 300, action: { stream, _ in stream.enableReading() }),
            ])
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(elapsed >= 400 - Self.slack)
        #expect(elapsed < 2000)
    }

    @Test func aWriteTimeoutFiresWhenThePeerNeverReads() throws {
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        try stream.output.append(pattern(4 * 1024 * 1024, seed: 5))
        let recorder = StreamRecorder()  // the clock starts here, not while the payload is made
        stream.delegate = recorder
        stream.setTimeouts(readMilliseconds: 0, writeMilliseconds: 100)
        stream.flush()
        try runLoop(loop, milliseconds: 3000) { !recorder.ends.isEmpty }
        let elapsed = try #require(recorder.endedAtMilliseconds)
        #expect(recorder.ends == [.writeTimeout])
        #expect(elapsed >= 100 - Self.slack)
        #expect(elapsed < 1000)
    }

    @Test func noWriteTimeoutWhileThePeerReadsSlowly() throws {
        // The peer takes 64 KiB every 30 ms against a 400 ms write timeout: the transfer takes about 2 s, five
        // timeouts, so progress must keep moving the deadline (the margin absorbs a loop stalled under ASan).
        let loop = try EventLoop(lockless: true)
        let (fd, peer) = socketPair()
        defer { close(peer) }
        let stream = try SocketStream(loop: loop, fd: fd, maxRead: 65536)
        let recorder = StreamRecorder()
        stream.delegate = recorder
        stream.setTimeouts(readMilliseconds: 0, writeMilliseconds: 400)
        let payload = pattern(4 * 1024 * 1024, seed: 6)
        try stream.output.append(payload)
        stream.flush()
        var received: [UInt8] = []
        let reader = try LoopTimer(loop: loop, repeats: true) { drainSocket(peer, into: &received, limit: 64 * 1024) }
        try reader.schedule(milliseconds: 30)
        try runLoop(loop, milliseconds: 10_000) { received.count == payload.count || !recorder.ends.isEmpty }
        #expect(recorder.ends.isEmpty)
        #expect(sameBytes(received, payload))
    }
}
