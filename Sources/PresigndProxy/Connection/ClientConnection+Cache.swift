import PresigndHTTP1

#if canImport(Glibc)
    import Glibc
#endif

/// The read cache on the connection (issue 23): what a write through presignd makes stale.
extension ClientConnection {
    /// Drops the cached objects the exchange's write changes (`CacheInvalidation`), from every open store. Called
    /// when the request is routed (before any of it is sent) and again when its answer arrives: a read that
    /// follows the write's answer cannot find the old object, even one cached while the write was in flight.
    func invalidateCache(_ exchange: Exchange) {
        guard let invalidation = exchange.cacheInvalidation else { return }
        for failure in invalidation.apply(to: settings.caches) {
            worker.logger.error(
                "Cache invalidation failed",
                metadata: [
                    "cache.directory": failure.directory, "error": failure.error.description,
                    "request.id": exchange.requestID,
                ])
        }
    }
}

/// What the cache does with a request, decided at its head (`ClientConnection.cacheStart`).
enum CacheStart {
    case upstream
    case local(LocalAnswer)
    case revalidate(CacheRevalidation, fields: HTTPHeaders)
}

/// Cached answers (issue 23 §2 to §5): decided at the request's head, after the policy, written from slice files.
extension ClientConnection {
    /// What the cache does with a GET or HEAD (issue 23): answer it (its slices opened), send it upstream with
    /// `If-None-Match` to revalidate (its slices opened too), or nothing (a miss, a slice gone, a store error: the
    /// cache never answers with less than every byte).
    func cacheStart(_ target: CacheReadTarget, head: RequestHead, plan: ForwardPlan) -> CacheStart {
        guard let store = settings.caches[target.directory], let entry = try? store.lookup(target.name) else {
            return .upstream
        }
        let decision = CacheRead.decide(
            method: head.method, queryNames: plan.request.query.map(\.name), headers: head.headers,
            key: target.name.key, entry: entry, now: CredentialRefresher.wallClockMilliseconds(),
            config: target.config)
        let cached: CachedHead
        switch decision {
        case .upstream: return .upstream
        case .local(let local): cached = local
        case .revalidate(let local, _): cached = local
        }
        let opened = OpenedSlices()
        for index in cached.slices {
            // Opened under the store's lock: an eviction after this unlinks the name, not these bytes.
            guard let slice = try? store.openSlice(entry.identity, index: index, within: cached.bytes) else {
                return .upstream  // `opened` closes what it holds
            }
            let (offset, length) = (slice.offset, slice.length)
            opened.append(descriptor: slice.takeDescriptor(), offset: offset, length: length)
        }
        if case .revalidate(_, let fields) = decision {
            return .revalidate(
                CacheRevalidation(store: store, entry: entry, head: cached, slices: opened), fields: fields)
        }
        openedSlices = opened
        store.metrics.countHit(bytes: cached.bytes.count)
        return .local(.cached(CachedResponse(head: cached, method: head.method, logPath: plan.logPath)))
    }

    /// The head to send the client for the upstream's final answer: the exchange's revalidation, if any, decides.
    func revalidated(_ head: ResponseHead, _ exchange: Exchange) -> ResponseHead {
        guard let revalidation = exchange.cacheRevalidation else { return head }
        exchange.cacheRevalidation = nil
        return finishRevalidation(revalidation, upstream: head, exchange: exchange)
    }

    /// The upstream's answer to a revalidation: the head to send the client (the cached one after a 304, the
    /// upstream's otherwise), the entry validated or dropped as the answer says.
    func finishRevalidation(_ revalidation: CacheRevalidation, upstream head: ResponseHead, exchange: Exchange)
        -> ResponseHead
    {
        let store = revalidation.store
        let identity = revalidation.entry.identity
        store.metrics.countRevalidation()
        switch CacheRead.outcome(of: head, stored: revalidation.entry.stored) {
        case .serveCached:
            try? store.markValidated(identity, at: CredentialRefresher.wallClockMilliseconds())
            store.metrics.countHit(bytes: revalidation.head.bytes.count)
            exchange.cachedBody = revalidation.slices
            return ResponseHead(
                status: revalidation.head.status, reason: HTTPEncoder.reasonPhrase(for: revalidation.head.status),
                headers: revalidation.head.fields)
        case .passThrough(let validates, let invalidates):
            if validates { try? store.markValidated(identity, at: CredentialRefresher.wallClockMilliseconds()) }
            if invalidates { _ = try? store.invalidate(identity.name) }
            return head
        }
    }

    /// Writes a cached answer: its head, then its slices as file pieces of the output (sent with `sendfile`).
    func writeCached(_ response: CachedResponse, closing: Bool) {
        let requestID = worker.nextRequestID()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        HTTPEncoder.append("HTTP/1.1", into: &bytes)
        HTTPEncoder.appendStatusAndReason(
            response.head.status, HTTPEncoder.reasonPhrase(for: response.head.status), into: &bytes)
        for (name, value) in response.head.fields { HTTPEncoder.appendField(name, value, into: &bytes) }
        HTTPEncoder.appendField("x-presignd-request-id", requestID, into: &bytes)
        if closing { HTTPEncoder.append("Connection: close\r\n", into: &bytes) }
        HTTPEncoder.append("\r\n", into: &bytes)
        write(bytes)
        let pieces = openedSlices?.take() ?? []
        openedSlices = nil
        guard sendCachedBody(pieces, exchange: nil) else { return }
        worker.localResponseSent(
            method: response.method, path: response.logPath, status: response.head.status,
            bytesOut: response.head.bytes.count, client: peer, requestID: requestID, errorCode: nil)
    }

    /// Queues a cached answer's slices after its head; false when one could not be queued (the connection is then
    /// cut: the head is out, the client must see a cut rather than a short answer).
    @discardableResult
    func sendCachedBody(_ pieces: [(descriptor: Int32, offset: Int, length: Int)], exchange: Exchange?) -> Bool {
        for (index, piece) in pieces.enumerated() {
            do {
                try stream.appendFile(descriptor: piece.descriptor, offset: piece.offset, length: piece.length)
                exchange?.responseBodyBytes += piece.length
            } catch {
                for rest in pieces[(index + 1)...] { Glibc.close(rest.descriptor) }
                worker.logger.error("Cache answer failed", metadata: ["error": error.description])
                handle(.clientEnded(.aborted))
                return false
            }
        }
        return true
    }
}
