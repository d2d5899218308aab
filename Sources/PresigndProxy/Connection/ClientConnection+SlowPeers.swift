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
        if let sender = cachedBodySender {
            checkSlowCachedReader(sender, now: now)
            return
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
            bytes = responseBytesTaken(queued: exchange.responseBodyBytes)
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

    /// How far the client has read the response, as a count that grows with what it takes: the bytes its TCP
    /// acknowledged plus what left presignd's output. Not what presignd queued: a cached answer's first 16 slice
    /// files (16 MiB at 1 MiB slices) are queued at once, and that count would not move while a client reads them
    /// at any pace. Not only what left the output either: the kernel's send buffer (megabytes on loopback) takes
    /// bytes back in steps of a third of itself, so a client reading a steady 16 KiB/s would be seen to move
    /// nothing for a minute. The sum moves when either does: a unix socket, or a kernel that reports no
    /// acknowledged bytes (gVisor's stays 0), is judged by the output alone, as before.
    private func responseBytesTaken(queued: Int) -> Int {
        (stream.bytesAcknowledged ?? 0) + (queued - output.count)
    }

    /// `min_body_rate` for a cached answer whose slices are queued as the client reads (`CachedBodySender`): what
    /// the socket took of them. A client that stops reading would otherwise hold the answer's slice files open.
    private func checkSlowCachedReader(_ sender: CachedBodySender, now: Int) {
        guard machine.measuredBody == .response, output.count > 0 else {
            sender.rateMeter.restart()
            return
        }
        let limits = settings.limits
        guard
            sender.rateMeter.isTooSlow(
                .response, bytes: responseBytesTaken(queued: sender.queuedBytes), now: now,
                bytesPerSecond: limits.minBodyRate,
                windowMilliseconds: limits.bodyRateWindowMilliseconds)
        else { return }
        worker.metrics.limits.slowBodyAborted()
        logCutCachedAnswer(code: "ResponseBodyTooSlow")  // the answer's line, local or revalidated, says why
        handle(.bodyTooSlow)
        settle()
    }
}
