import PresigndIO

/// What a worker does at an exchange's start and end: metrics, the access log, upstream timings.
extension Worker {
    func exchangeStarted(_ exchange: Exchange, client: String) {
        exchange.ops.client = client
        metrics.requestStarted()
    }

    /// Every exchange ends here exactly once: counted, and logged (`completed` false: cut short).
    func exchangeEnded(_ exchange: Exchange, completed: Bool) {
        recycleSignedHead(of: exchange)
        // Fields read in place: a copy of the whole `ExchangeObservation` retains and releases each of its strings.
        let duration = max(0, nowMicroseconds() - exchange.ops.startedAtMicros)
        metrics.requestEnded(
            bucket: exchange.bucket, method: exchange.method, status: exchange.responseStatus,
            bytesIn: exchange.requestBodyBytes, bytesOut: exchange.responseBodyBytes, durationMicros: duration,
            principal: exchange.ops.principalLabel,
            upstreamSlot: exchange.ops.upstreamSlot, upstreamLatencyMicros: exchange.ops.upstreamLatencyMicros,
            reusedConnections: exchange.ops.reusedConnections)
        logAccess(
            AccessLogEntry(
                requestID: exchange.requestID, client: exchange.ops.client, bucket: exchange.bucket,
                method: exchange.method, path: exchange.logPath, status: exchange.responseStatus,
                bytesIn: exchange.requestBodyBytes, bytesOut: exchange.responseBodyBytes, durationMicros: duration,
                upstreamStatus: exchange.ops.upstreamStatus, upstreamMicros: exchange.ops.upstreamLatencyMicros,
                upstreamReused: exchange.ops.upstreamReused,
                errorCode: exchange.ops.errorCode ?? (completed ? nil : "aborted"), operation: exchange.ops.operation,
                policyRule: exchange.ops.policyRule, principal: exchange.ops.principal,
                upstreamAttempts: exchange.ops.attempts > 0 ? exchange.ops.attempts : nil))
        if exchange.ops.attempts > 1, let slot = exchange.ops.upstreamSlot {
            metrics.retriedRequestEnded(
                slot: slot,
                succeeded: completed && exchange.responseStatus < 500 && exchange.responseStatus != 429
                    && exchange.ops.errorCode == nil)
        }
    }

    /// A response presignd wrote itself with no exchange behind it (routing, policy, malformed requests).
    func localResponseSent(
        method: String, path: String, status: Int, bytesOut: Int, client: SocketAddress, requestID: String,
        errorCode: String?, denial: (operation: String, rule: String)? = nil, principal: String? = nil,
        principalLabel: String = "unknown"
    ) {
        metrics.requestEnded(
            bucket: "-", method: method, status: status, bytesIn: 0, bytesOut: bytesOut, durationMicros: 0,
            principal: principalLabel, wasInFlight: false)
        logAccess(
            AccessLogEntry(
                requestID: requestID, client: client.host, bucket: nil, method: method, path: path, status: status,
                bytesIn: 0, bytesOut: bytesOut, durationMicros: 0, errorCode: errorCode, operation: denial?.operation,
                policyRule: denial?.rule, principal: principal))
    }

    /// An exchange's signed head went to `connection` (pooled or new): timings, reuse and TLS counters.
    /// `settings` are the ones the exchange runs under: after a reload they may be the old ones,
    /// whose upstream indexes the slots resolved for the current configuration do not follow.
    func upstreamAttached(
        _ connection: UpstreamConnection, to exchange: Exchange, settings exchangeSettings: ProxySettings
    ) {
        let index = exchange.upstreamIndex
        let slot =
            exchangeSettings === settings
            ? metricSlots[index] : metrics.upstreamSlot(named: exchangeSettings.upstreams[index].name)
        exchange.ops.upstreamAttached(slot: slot, reused: connection.isReused, at: nowMicroseconds())
        if !connection.isReused { metrics.upstreamConnectionOpened(slot: slot) }
        if !connection.isReused && connection.onTLSHandshake == nil {
            connection.onTLSHandshake = { [metrics] resumed in metrics.tlsHandshake(slot: slot, resumed: resumed) }
        }
    }

    /// One access-log line per request: never the query string (it may carry presign signatures).
    /// The entry is built only when the access log is on (`@autoclosure`): nothing per request otherwise.
    func logAccess(_ entry: @autoclosure () -> AccessLogEntry) {
        guard settings.accessLog else { return }
        logger.log(.info, "Request", pairs: entry().metadata)
    }
}
