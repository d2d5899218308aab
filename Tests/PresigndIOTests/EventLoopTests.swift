import PresigndIO
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized)
struct EventLoopTests {
    @Test func timersFireOnceOrRepeatAndCancel() throws {
        let loop = try EventLoop(lockless: true)
        var once = 0
        var repeated = 0
        var cancelled = 0
        let single = try LoopTimer(loop: loop) { once += 1 }
        let repeating = try LoopTimer(loop: loop, repeats: true) { repeated += 1 }
        let never = try LoopTimer(loop: loop) { cancelled += 1 }
        try single.schedule(milliseconds: 10)
        try repeating.schedule(milliseconds: 10)
        try never.schedule(milliseconds: 20)
        #expect(never.isScheduled)
        never.cancel()
        #expect(!never.isScheduled)
        try runLoop(loop, for: 120)
        #expect(once == 1)
        #expect(repeated >= 3)
        #expect(cancelled == 0)
        repeating.cancel()
    }

    @Test func fireSoonRunsOnTheNextRound() throws {
        let loop = try EventLoop(lockless: true)
        var fired = 0
        let timer = try LoopTimer(loop: loop) { fired += 1 }
        timer.fireSoon()
        #expect(fired == 0)
        try runLoop(loop) { fired == 1 }
        #expect(fired == 1)
    }

    @Test func exitLeavesRun() throws {
        let loop = try EventLoop()
        let timer = try LoopTimer(loop: loop) { loop.exit() }
        try timer.schedule(milliseconds: 5)
        let forever = try LoopTimer(loop: loop, repeats: true) {}
        try forever.schedule(milliseconds: 1000)
        try loop.run()
    }

    @Test func theCachedTimeIsTheWallClock() throws {
        let loop = try EventLoop(lockless: true)
        var now = timeval()
        gettimeofday(&now, nil)
        let wall = Int(now.tv_sec) * 1_000_000 + Int(now.tv_usec)
        #expect(abs(loop.nowMicroseconds - wall) < 2_000_000)
    }

    @Test func aCrossThreadEventRunsOnTheLoopThread() throws {
        try EventLoop.enableThreads()
        let loop = try EventLoop(lockless: true)
        var woken = 0
        let event = try CrossThreadEvent(loop: loop) { woken += 1 }
        let thread = try #require(
            Thread.start {
                usleep(10_000)
                event.fire()
            })
        try runLoop(loop) { woken > 0 }
        thread.join()
        #expect(woken == 1)
    }

    @Test func aSignalEventRunsItsAction() throws {
        let loop = try EventLoop()
        var received = 0
        let handler = try SignalEvent(loop: loop, signal: SIGUSR1) { received += 1 }
        #expect(kill(getpid(), SIGUSR1) == 0)
        try runLoop(loop) { received > 0 }
        #expect(received == 1)
        withExtendedLifetime(handler) {}
    }
}

/// A pthread running a closure (tests only: Foundation's Thread is not used under Sources/ or here).
final class Thread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: @Sendable () -> Void

    private init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    static func start(_ body: @escaping @Sendable () -> Void) -> Thread? {
        let box = Thread(body)
        let context = Unmanaged.passRetained(box).toOpaque()
        let status = pthread_create(
            &box.thread, nil,
            { context in
                let box = Unmanaged<Thread>.fromOpaque(context!).takeRetainedValue()
                box.body()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Thread>.fromOpaque(context).release()
            return nil
        }
        return box
    }

    func join() {
        pthread_join(thread, nil)
    }
}
