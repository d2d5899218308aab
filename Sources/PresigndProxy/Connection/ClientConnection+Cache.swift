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

/// Cached answers (issue 23 §2 to §5): decided at the request's head, after the policy, written from slice files.
extension ClientConnection {
    /// The cached answer to a GET or HEAD, with its slices opened; nil to go upstream (a miss, a revalidation due,
    /// a slice gone, a store error: the cache never answers with less than every byte).
    func cachedAnswer(_ target: CacheReadTarget, head: RequestHead, plan: ForwardPlan) -> LocalAnswer? {
        guard let store = settings.caches[target.directory], let entry = try? store.lookup(target.name) else {
            return nil
        }
        let decision = CacheRead.decide(
            method: head.method, queryNames: plan.request.query.map(\.name), headers: head.headers,
            key: target.name.key, entry: entry, now: CredentialRefresher.wallClockMilliseconds(),
            config: target.config)
        guard case .local(let cached) = decision else { return nil }
        let opened = OpenedSlices()
        for index in cached.slices {
            // Opened under the store's lock: an eviction after this unlinks the name, not these bytes.
            guard let slice = try? store.openSlice(entry.identity, index: index, within: cached.bytes) else {
                return nil  // `opened` closes what it holds
            }
            let (offset, length) = (slice.offset, slice.length)
            opened.append(descriptor: slice.takeDescriptor(), offset: offset, length: length)
        }
        openedSlices = opened
        store.metrics.countHit(bytes: cached.bytes.count)
        return .cached(CachedResponse(head: cached, method: head.method, logPath: plan.logPath))
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
        for (index, piece) in pieces.enumerated() {
            do {
                try stream.appendFile(descriptor: piece.descriptor, offset: piece.offset, length: piece.length)
            } catch {
                // The head is out: the body cannot be completed, the client must see a cut, not a short answer.
                for rest in pieces[(index + 1)...] { Glibc.close(rest.descriptor) }
                worker.logger.error("Cache answer failed", metadata: ["error": error.description])
                handle(.clientEnded(.aborted))
                return
            }
        }
        worker.localResponseSent(
            method: response.method, path: response.logPath, status: response.head.status,
            bytesOut: response.head.bytes.count, client: peer, requestID: requestID, errorCode: nil)
    }
}
