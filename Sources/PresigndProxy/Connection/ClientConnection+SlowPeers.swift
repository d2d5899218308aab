/// Slow peers (issue 20): the head's absolute deadline and `min_body_rate`, checked by the worker's sweep
/// (`Worker.sweepSlowPeers`) rather than by a timer per connection.
extension ClientConnection {
    /// One sample at `now` (milliseconds): a head past its deadline, an answer held too long, a wait for a cache
    /// fill too long or a body below the rate becomes an event.
    func checkSlowPeer(now: Int) {
        if case .readingHead = machine.state {
            handle(.tick(now: now))
            settle()
            return
        }
        if machine.holdsAnswer || machine.awaitsCache {
            handle(.tick(now: now))
            settle()
        }
        guard let exchange else { return }
        guard let measured = machine.measuredBody else {
            exchange.rateMeter.restart()
            return
        }
        let bytes: Int
        switch measured {
        case .request:
            // Not read for backpressure (the upstream is slow to take the body): the client is not to blame.
            guard stream.isReading else {
                exchange.rateMeter.restart()
                return
            }
            bytes = exchange.requestBodyBytes
        case .response:
            // Nothing waits for the client: the upstream is the slow side (S3's whitespace while a copy runs), which
            // `body_idle_timeout` judges. The rate is for clients that do not read what they asked for.
            guard output.count > 0 else {
                exchange.rateMeter.restart()
                return
            }
            bytes = exchange.responseBodyBytes
        }
        let limits = settings.limits
        guard
            exchange.rateMeter.isTooSlow(
                measured, bytes: bytes, now: now, bytesPerSecond: limits.minBodyRate,
                windowMilliseconds: limits.bodyRateWindowMilliseconds)
        else { return }
        worker.metrics.limits.slowBodyAborted()
        exchange.ops.errorCode = measured == .request ? "RequestBodyTooSlow" : "ResponseBodyTooSlow"
        handle(.bodyTooSlow)
        settle()
    }
}
