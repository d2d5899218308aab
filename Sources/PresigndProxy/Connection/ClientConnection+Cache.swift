import PresigndCache
import PresigndHTTP1
import PresigndIO

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
    /// Another request is fetching the bytes this one needs: wait for it (`FillFlights`), then decide again.
    case wait
    /// Upstream as the client sent it; a cacheable answer is recorded and its slices filled as it streams.
    case fill(CacheFill)
    case local(LocalAnswer)
    case revalidate(CacheRevalidation, fields: HTTPHeaders)
}

/// Cached answers (issue 23 §2 to §5): decided at the request's head, after the policy, written from slice files.
extension ClientConnection {
    /// What the cache does with a GET or HEAD (issue 23): answer it (its slices opened), send it upstream with
    /// `If-None-Match` to revalidate (its slices opened too), or nothing (a miss, a slice gone, a store error: the
    /// cache never answers with less than every byte).
    /// `attempt`: how many times the store changed under the decision already (see below).
    func cacheStart(
        _ target: CacheReadTarget, head: RequestHead, plan: ForwardPlan, mayWait: Bool, attempt: Int = 0
    ) -> CacheStart {
        guard let store = settings.caches[target.directory] else { return .upstream }
        let found: CachedObject?
        do { found = try store.lookup(target.name, key: target.key) } catch { return .upstream }
        let queryNames = plan.request.query.map(\.name)
        let fill = { (composition: Composition?) -> CacheStart in
            guard
                CacheRead.fillsOnMiss(
                    method: head.method, queryNames: queryNames, headers: head.headers, key: target.name.key,
                    config: target.config)
            else { return CacheStart.upstream }
            var flight: FillFlights.FlightID? = nil
            if mayWait, let waker = self.worker.cacheWaker {
                // Waits for another request's fill of these bytes, or opens this one's flight, in one step.
                flight = store.flights.waitOrOpen(
                    target.key, for: Self.fillNeed(head.headers["Range"], entry: found),
                    CacheWaiter(waker: waker, connection: ObjectIdentifier(self)))
                if flight == nil { return .wait }
                // A fill may have written what this request needs and ended between the lookup above and the
                // open: decided on a stale view, this request would fetch those slices again. Looked up once
                // more after the open (any fill that ends later found this flight, or wrote before this lookup).
                if let flight, attempt < 3, (try? store.lookup(target.name, key: target.key)) != found {
                    store.flights.close(target.key, flight)
                    return self.cacheStart(target, head: head, plan: plan, mayWait: mayWait, attempt: attempt + 1)
                }
            }
            store.metrics.countMiss(bytesFetched: 0)
            let widened = WidenedRange.widen(
                head.headers["Range"], objectSize: found?.stored.objectSize,
                sliceSize: found?.layout.sliceSize ?? target.config.sliceSize)
            let fill = CacheFill(
                store: store, name: target.name, key: target.key, config: target.config,
                widened: composition == nil ? widened : nil, flight: flight)
            fill.composition = composition
            return .fill(fill)
        }
        guard let entry = found else {
            // A remembered 404 (`negative_ttl`): answered here while it holds, for a request that would fill.
            if head.method == "GET" || head.method == "HEAD",
                (try? store.isKnownMissing(
                    target.name, key: target.key, now: CredentialRefresher.wallClockMilliseconds())) == true,
                CacheRead.fillsOnMiss(
                    method: "GET", queryNames: queryNames, headers: head.headers, key: target.name.key,
                    config: target.config)
            {
                store.metrics.countHit(bytes: 0)
                return .local(.error(.noSuchKey))
            }
            return fill(nil)
        }
        let decision = CacheRead.decide(
            method: head.method, queryNames: queryNames, headers: head.headers, key: target.name.key, entry: entry, now: CredentialRefresher.wallClockMilliseconds(),
            config: target.config)
        let cached: CachedHead
        switch decision {
        case .upstream: return fill(nil)
        case .compose(let cached, let run):
            // The present slices opened now (one gone: a plain fill of the whole range instead).
            let (prefix, suffix) = (OpenedSlices(), OpenedSlices())
            for index in cached.slices where !run.contains(index) {
                guard
                    let slice = try? store.openSlice(
                        entry.identity, key: target.key, index: index, within: cached.bytes)
                else {
                    return fill(nil)
                }
                let (offset, length) = (slice.offset, slice.length)
                (index < run.lowerBound ? prefix : suffix).append(
                    descriptor: slice.takeDescriptor(), offset: offset, length: length)
            }
            let layout = entry.layout
            return fill(
                Composition(
                    version: entry.identity.version, head: cached,
                    run: layout.bytes(ofSlice: run.lowerBound).lowerBound..<layout.bytes(ofSlice: run.upperBound - 1)
                        .upperBound, prefix: prefix, suffix: suffix))
        case .local(let local): cached = local
        case .revalidate(let local, _): cached = local
        }
        let opened = OpenedSlices()
        let first = cached.slices.prefix(CacheRead.maxSlicesPerAnswer)
        for index in first {
            // Opened under the store's lock: an eviction after this unlinks the name, not these bytes.
            guard
                let slice = try? store.openSlice(entry.identity, key: target.key, index: index, within: cached.bytes)
            else {
                return fill(nil)  // `opened` closes what it holds
            }
            let (offset, length) = (slice.offset, slice.length)
            opened.append(descriptor: slice.takeDescriptor(), offset: offset, length: length)
        }
        // The rest of the slices were present at the decision; each is opened when the output has room.
        let rest =
            first.count < cached.slices.count
            ? CachedBodySender(
                store: store, identity: entry.identity, key: target.key, bytes: cached.bytes,
                slices: first.upperBound..<cached.slices.upperBound) : nil
        if case .revalidate(_, let fields) = decision {
            return .revalidate(
                CacheRevalidation(store: store, entry: entry, head: cached, slices: opened, rest: rest),
                fields: fields)
        }
        openedSlices = opened
        var response = CachedResponse(head: cached, method: head.method, logPath: plan.logPath)
        if let rest {
            cachedBodySender = rest
            response.streamsBody = true
        }
        store.metrics.countHit(bytes: cached.bytes.count)
        return .local(.cached(response))
    }

    /// What a miss needs of the object, to wait for another request's fill of it: nil for what cannot be known
    /// before the answer (a suffix range of an object of unknown size).
    static func fillNeed(_ range: String?, entry: CachedObject?) -> FillFlights.Need? {
        if let entry {
            guard let framing = ContentRange.answer(
                ClientRange.parse(range, objectSize: entry.stored.objectSize), objectSize: entry.stored.objectSize)
            else { return nil }
            return FillFlights.Need(bytes: framing.bytes, layout: entry.layout)
        }
        guard range == nil || !(range ?? "").contains("=-") else { return nil }
        switch ClientRange.parse(range, objectSize: Int.max) {
        case .whole: return FillFlights.Need(bytes: 0..<Int.max, layout: nil)
        case .bytes(let bytes): return FillFlights.Need(bytes: bytes, layout: nil)
        default: return nil
        }
    }

    /// Where a GET or HEAD of a cached bucket goes (issue 23), decided at its head and again after a wait for
    /// another request's fill: answered from the cache, revalidated, filled, sent upstream, or waiting.
    func cacheRoute(
        _ target: CacheReadTarget, plan: ForwardPlan, head: RequestHead, isHTTP10: Bool, mayWait: Bool
    ) throws(ProxyError) -> RequestRoute {
        var plan = plan
        switch cacheStart(target, head: head, plan: plan, mayWait: mayWait) {
        case .local(let answer):
            request.logPath = plan.logPath
            return .local(answer)
        case .revalidate(let revalidation, let fields):
            for (name, value) in fields { plan.request.headers.append((name, value)) }
            let route = try forwardRoute(plan, head: head, hasBody: false, isHTTP10: isHTTP10)
            exchange?.cacheRevalidation = revalidation
            return route
        case .fill(let fill):
            if let composition = fill.composition {
                // Only the missing run, and only of the stored version (a changed object answers 412).
                plan.request.headers.removeAll {
                    ASCII.equalsLowercase($0.name, "range") || ASCII.equalsLowercase($0.name, "if-match")
                }
                plan.request.headers.append(("Range", SliceLayout.rangeField(composition.run)))
                plan.request.headers.append(("If-Match", composition.version.etag))
            } else if let widened = fill.widened {
                // Whole slices upstream, so every byte fetched can be kept; the client gets its own range.
                for index in plan.request.headers.indices
                where ASCII.equalsLowercase(plan.request.headers[index].name, "range") {
                    plan.request.headers[index].value = widened.field
                }
            }
            let route = try forwardRoute(plan, head: head, hasBody: false, isHTTP10: isHTTP10)
            exchange?.cacheFill = fill
            return route
        case .upstream:
            return try forwardRoute(plan, head: head, hasBody: false, isHTTP10: isHTTP10)
        case .wait:
            request.logPath = plan.logPath
            pendingCacheRead = PendingCacheRead(target: target, plan: plan, head: head, isHTTP10: isHTTP10)
            return .awaitCache(since: worker.nowMicroseconds() / 1000)
        }
    }

    /// A wake from a cache store: the fill this request waited for wrote what it needs or ended (decide again: it
    /// may wait once more), or the write queue this request's own fill waits for has room (read on).
    func cacheWaitEnded() {
        guard case .exchange(let state) = machine.state else { return }
        if case .awaitingCache = state.response {
            settleCacheWait(mayWait: true)
        } else if let fill = exchange?.cacheFill, fill.isPaused {
            fill.roomMayBeThere()
            if !resumeCacheFill(fill) { return }
        }
        settle()
    }

    /// Queues a paused fill's slices; false while the write queue is still full (then one wake is arranged:
    /// `settle` and the upstream loop both ask, whichever notices the pause first).
    func resumeCacheFill(_ fill: CacheFill) -> Bool {
        guard !fill.awaitsRoom else { return false }
        guard let waker = worker.cacheWaker else { return fill.submitBlocked() }
        while !fill.submitBlocked() {
            if fill.waitForRoom(CacheWaiter(waker: waker, connection: ObjectIdentifier(self))) { return false }
        }
        return true
    }

    /// Decides a waiting request again; without `mayWait` (it waited too long) it fetches for itself.
    func settleCacheWait(mayWait: Bool) {
        guard let pending = pendingCacheRead else { return }
        pendingCacheRead = nil
        do throws(ProxyError) {
            let route = try cacheRoute(
                pending.target, plan: pending.plan, head: pending.head, isHTTP10: pending.isHTTP10, mayWait: mayWait)
            handle(.cacheSettled(route))
        } catch {
            handle(.failed(error))
        }
    }

    /// The head to send the client for the upstream's final answer: the exchange's revalidation, if any, decides;
    /// a fill starts cutting slices when the answer may be kept.
    /// Nil when a widened range's answer does not hold the client's bytes (the caller fails the request).
    func throughCache(_ head: consuming ResponseHead, _ exchange: Exchange) -> ResponseHead? {
        if let fill = exchange.cacheFill {
            let sent = fill.begin(head, now: CredentialRefresher.wallClockMilliseconds())
            if sent != nil, let composition = fill.composition {
                // The present slices around the fetched run: before it after the head, after it at the end.
                exchange.cachedBody = composition.prefix
                exchange.cachedSuffix = composition.suffix
            }
            return sent
        }
        guard let revalidation = exchange.cacheRevalidation else { return head }
        exchange.cacheRevalidation = nil
        return finishRevalidation(revalidation, upstream: head, exchange: exchange)
    }

    /// The next `count` response body bytes, still at the front of `input`, as the fill sees them.
    func feedFill(_ fill: CacheFill, from input: IOBuffer, count: Int) {
        fill.consume(count: count, bytes: fill.wants(count) ? input.copyOut(count) : [])
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
            exchange.cachedRest = revalidation.rest
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
        if response.streamsBody {
            cachedBodySender?.log = (response, requestID)  // logged once the last slice is queued, or when cut
            cachedBodySender?.queuedBytes = pieces.reduce(0) { $0 + $1.length }
            pumpCachedBody()
            return
        }
        worker.localResponseSent(
            method: response.method, path: response.logPath, status: response.head.status,
            bytesOut: response.head.bytes.count, client: peer, requestID: requestID, errorCode: nil)
    }

    /// A streaming cached answer that will not finish (a slice gone, the client gone, a write timeout): its
    /// access-log line and request metric, with what was queued of its body and why.
    func logCutCachedAnswer(code: String) {
        defer { cachedBodySender = nil }
        if cachedBodySender != nil { exchange?.ops.errorCode = code }  // a revalidated answer's line says why
        guard let sender = cachedBodySender, let (response, requestID) = sender.log else { return }
        worker.localResponseSent(
            method: response.method, path: response.logPath, status: response.head.status,
            bytesOut: sender.queuedBytes, client: peer, requestID: requestID, errorCode: code)
    }

    /// Queues the next slices of a streaming cached answer while the client's output is below the high watermark
    /// (called by `settle`); the last one ends the answer (`cachedBodySent`). Returns whether anything was queued.
    @discardableResult
    func pumpCachedBody() -> Bool {
        guard let sender = cachedBodySender, case .exchange(let state) = machine.state,
            case .sendingCached = state.response
        else { return false }
        var queued = false
        while !sender.isDone && output.count < settings.highWatermark {
            guard let slice = sender.openNext() else {
                // Evicted or replaced since the decision: the head promised a length, so the client sees a cut.
                logCutCachedAnswer(code: "CacheSliceGone")
                worker.logger.warning(
                    "Cached answer cut: a slice left the cache while it was sent",
                    metadata: ["cache.directory": sender.store.directory])
                handle(.failed(.internalError("a cached slice left the cache mid-answer")))
                return true
            }
            let (offset, length) = (slice.offset, slice.length)
            // `exchange`: a revalidated answer's (its access-log line counts the bytes); nil for a local one.
            guard sendCachedBody([(slice.takeDescriptor(), offset, length)], exchange: exchange) else {
                logCutCachedAnswer(code: "ResponseCut")
                return true
            }
            queued = true
        }
        guard sender.isDone else { return queued }
        cachedBodySender = nil
        if let (response, requestID) = sender.log {
            worker.localResponseSent(
                method: response.method, path: response.logPath, status: response.head.status,
                bytesOut: response.head.bytes.count, client: peer, requestID: requestID, errorCode: nil)
        }
        handle(.cachedBodySent)
        return true
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
