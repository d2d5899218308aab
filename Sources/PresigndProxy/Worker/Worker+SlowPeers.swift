import PresigndIO

/// The worker's sweep for slow peers (issue 20): twice a second every connection checks its head deadline and its
/// body rate (`ClientConnection.checkSlowPeer`). One timer per worker instead of one per connection: a sample is a
/// few comparisons, and the deadlines need no finer grain than half a second.
extension Worker {
    static let slowPeerSweepMilliseconds = 500

    func startSlowPeerSweep() {
        guard slowPeerSweep == nil else { return }
        do {
            let timer = try LoopTimer(loop: loop, repeats: true) { [unowned self] in self.sweepSlowPeers() }
            try timer.schedule(milliseconds: Self.slowPeerSweepMilliseconds)
            slowPeerSweep = timer
        } catch {
            logger.error("Cannot start the slow-peer checks", metadata: ["error": error.description])
        }
    }

    func sweepSlowPeers() {
        let now = nowMicroseconds() / 1000
        for connection in connectionsSnapshot() where !connection.isClosed {
            connection.checkSlowPeer(now: now)
        }
    }
}
