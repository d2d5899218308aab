import CLibevent
import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// The read pump's timeout is a deadline it keeps itself and arms a timer for only when needed; these
/// run a real event loop over a socket pair and check when the timeout is reported.
@Suite(.serialized)
struct SocketReadPumpTests {
    /// Records what the pump reports and stops the loop at the first end event.
    final class Recorder: SocketReadPumpDelegate {
        let loop: EventLoop
        let started = MonotonicClock.microseconds()
        var reads = 0
        var endedAfterMilliseconds: Int?
        var endEvents: Int16 = 0
        var onRead: (() -> Void)?

        init(loop: EventLoop) { self.loop = loop }

        func pumpDidRead() {
            reads += 1
            onRead?()
        }

        func pumpDidEnd(_ events: Int16) {
            endEvents = events
            endedAfterMilliseconds = (MonotonicClock.microseconds() - started) / 1000
            loop.exit()
        }
    }

    /// A pump over one end of a socket pair; `steps` run on the loop at the given times; the run
    /// ends at the first end event or after `limitMilliseconds`.
    private func run(
        timeout: Int, limitMilliseconds: Int = 3000,
        steps: [(at: Int, action: (SocketReadPump, Int32) -> Void)] = []
    ) throws -> Recorder {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) == 0)
        let loop = try EventLoop(lockless: true)
        let input = evbuffer_new()!
        defer { evbuffer_free(input) }
        let recorder = Recorder(loop: loop)
        let pump = SocketReadPump(
            loop: loop, fd: fds[0], input: input, maxRead: SocketReadPump.maxRequestRead, timeoutMilliseconds: timeout,
            delegate: recorder)
        pump.enable()
        let peer = fds[1]
        let timers = steps.map { step in
            let timer = LoopTimer(loop: loop) { step.action(pump, peer) }
            timer.schedule(milliseconds: step.at)
            return timer
        }
        let limit = LoopTimer(loop: loop) { loop.exit() }
        limit.schedule(milliseconds: limitMilliseconds)
        loop.run()
        withExtendedLifetime((pump, timers, limit)) {}
        return recorder
    }

    private static func send(_ fd: Int32) {
        var byte: UInt8 = 0x41
        #expect(write(fd, &byte, 1) == 1)
    }

    /// Coarse-clock slack: the deadline may come a few milliseconds early.
    private static let slack = 10

    @Test func timesOutAfterTheTimeoutAsAReadingTimeout() throws {
        let recorder = try run(timeout: 100)
        let elapsed = try #require(recorder.endedAfterMilliseconds)
        #expect(elapsed >= 100 - Self.slack)
        #expect(elapsed < 1000)
        #expect(Int32(recorder.endEvents) == Int32(BEV_EVENT_READING | BEV_EVENT_TIMEOUT))
    }

    @Test func aReadMovesTheDeadlineOn() throws {
        let recorder = try run(timeout: 150, steps: [(at: 100, action: { _, peer in Self.send(peer) })])
        let elapsed = try #require(recorder.endedAfterMilliseconds)
        #expect(recorder.reads == 1)
        #expect(elapsed >= 250 - Self.slack)  // 100 + 150: counted from the read, not from the start
        #expect(elapsed < 1500)
    }

    @Test func aLongerTimeoutOutlivesTheArmedTimer() throws {
        // The timer armed for 100 ms fires first, finds the later deadline and waits for the rest.
        let recorder = try run(
            timeout: 100, steps: [(at: 50, action: { pump, _ in pump.setTimeout(milliseconds: 400) })])
        let elapsed = try #require(recorder.endedAfterMilliseconds)
        #expect(elapsed >= 450 - Self.slack)
        #expect(elapsed < 2000)
    }

    @Test func aShorterTimeoutArmsTheTimerAgain() throws {
        let recorder = try run(
            timeout: 2500, steps: [(at: 50, action: { pump, _ in pump.setTimeout(milliseconds: 100) })])
        let elapsed = try #require(recorder.endedAfterMilliseconds)
        #expect(elapsed >= 150 - Self.slack)
        #expect(elapsed < 1000)
    }

    @Test func noTimeoutWhileDisabledOrWithoutOne() throws {
        let disabled = try run(
            timeout: 100, limitMilliseconds: 400, steps: [(at: 20, action: { pump, _ in pump.disable() })])
        #expect(disabled.endedAfterMilliseconds == nil)
        let none = try run(
            timeout: 100, limitMilliseconds: 400,
            steps: [(at: 20, action: { pump, _ in pump.setTimeout(milliseconds: 0) })])
        #expect(none.endedAfterMilliseconds == nil)
    }

    @Test func reEnablingCountsTheTimeoutFromThen() throws {
        let recorder = try run(
            timeout: 100,
            steps: [
                (at: 20, action: { pump, _ in pump.disable() }),
                (at: 300, action: { pump, _ in pump.enable() }),
            ])
        let elapsed = try #require(recorder.endedAfterMilliseconds)
        #expect(elapsed >= 400 - Self.slack)
        #expect(elapsed < 2000)
    }

    @Test func endOfFileIsReported() throws {
        let recorder = try run(timeout: 0, steps: [(at: 10, action: { _, peer in shutdown(peer, Int32(SHUT_WR)) })])
        #expect(Int32(recorder.endEvents) == Int32(BEV_EVENT_READING | BEV_EVENT_EOF))
    }
}
