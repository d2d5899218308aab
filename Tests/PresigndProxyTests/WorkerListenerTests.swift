import PresigndConfig
import PresigndIO
import PresigndTestSupport
import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// Bug e: a reload that cannot make its new listeners leaves the worker accepting where it did (it used to free
/// the old listeners first and leave the worker with none, and no error).
@Suite struct WorkerListenerTests {
    @Test func aReloadWhoseListenersCannotBeMadeKeepsThePreviousOnes() throws {
        let settings = ProxySettings(upstreams: [], routes: [], limits: ClientLimits())
        let metrics = WorkerMetrics()
        let worker = try Worker(index: 0, settings: settings, logger: Logger(minimumLevel: .error), metrics: metrics)
        let first = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        let port = try #require(Int(first.boundAddress.split(separator: ":").last ?? ""))
        try worker.listen(on: [first])
        // Not a socket at all: the listener cannot be made.
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        close(pipeEnds[1])
        var pipeStat = stat()
        #expect(fstat(pipeEnds[0], &pipeStat) == 0)
        let broken = ListenSocket(fd: pipeEnds[0], boundAddress: "127.0.0.1:1", isUnix: false)
        #expect(throws: StartupError.self) { try worker.replaceListeners(with: [broken]) }
        // Other suites run in parallel in this process and may be given the freed number at once: closed means
        // the number is free, or names another file than the pipe.
        var after = stat()
        let isClosed =
            fstat(pipeEnds[0], &after) != 0 || after.st_ino != pipeStat.st_ino || after.st_dev != pipeStat.st_dev
        #expect(isClosed, "the socket the failed reload brought is closed")

        let client = connectToLoopback(port: port)
        #expect(client >= 0)
        defer { close(client) }
        // Wakes the loop every 100 ms, so that a listener that no longer accepts fails the test instead of hanging it.
        let tick = try LoopTimer(loop: worker.loop, repeats: true) {}
        try tick.schedule(milliseconds: 100)
        defer { tick.cancel() }
        var rounds = 0
        while metrics.snapshot().totalConnections == 0 && rounds < 50 {
            _ = try worker.loop.runOnce()
            rounds += 1
        }
        #expect(metrics.snapshot().totalConnections == 1, "the old listener no longer accepts")
    }
}
