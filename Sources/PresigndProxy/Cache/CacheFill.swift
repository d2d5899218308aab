import PresigndCache
import PresigndConfig
import PresigndHTTP1

/// A GET the cache did not answer (issue 23 §6): the request goes upstream as the client sent it, and a cacheable
/// answer (`Cacheability.response`) is recorded in the store and cut into whole slices as its body streams to the
/// client (`SliceCutter`), each slice written off the loop (`SliceStore.submitSlice`). The client's bytes never
/// wait for the disk: a write queue over its budget only stops the fill.
final class CacheFill {
    let store: SliceStore
    let name: ObjectName
    /// `SliceStore.key(name)`, computed once per request.
    let key: CacheKey
    let config: CacheConfig
    /// Set when the answer's head was cacheable: the version the slices belong to, and the cutter.
    private(set) var identity: ObjectIdentity?
    private(set) var cutter: SliceCutter?

    /// The client's range when the upstream request asks for whole slices instead (`WidenedRange`).
    let widened: WidenedRange?
    /// An answer made of present slices and the missing run fetched now (`CacheRead.compose`).
    var composition: Composition?
    /// Why the answer's head could not be used (`begin` returned nil), for the client's error.
    private(set) var failure: ProxyError?
    /// Of a widened answer's body: the bytes before the client's (to the cache only) and the client's own.
    private var window: (skip: Int, take: Int)?

    /// The S3 error code of the answer's whole body, when it was read whole first (`holdsAnswer`): a 404 is
    /// remembered only as `NoSuchKey`, the one answer the cache gives for it (a `NoSuchBucket` is not).
    var errorCode: String?

    /// Whether a 404 to this fill would be remembered (`negative_ttl`): its body is then read whole first, for
    /// its code.
    var remembersMissing: Bool { config.negativeTTL.milliseconds > 0 }

    /// This fill's entry in the store's single-flight table: misses of the same bytes wait for it.
    private let flight: FillFlights.FlightID
    private var flightClosed = false

    /// `flight`: this fill's entry in the store's `FillFlights` (opened by the caller, or here).
    init(
        store: SliceStore, name: ObjectName, key: CacheKey, config: CacheConfig, widened: WidenedRange? = nil,
        flight: FillFlights.FlightID? = nil
    ) {
        self.store = store
        self.name = name
        self.key = key
        self.config = config
        self.widened = widened
        self.flight = flight ?? store.flights.open(key)
        mark = store.invalidationMark(name, key: key)
    }

    /// Where invalidation stood when the request was sent: a write through presignd since then (its answer may
    /// have come first) means this answer is not stored.
    private let mark: InvalidationMark?

    /// This fill holds one of the store's fill permits (`SliceStore.takeFillPermit`).
    private var holdsPermit = false

    /// However the exchange ended, its waiters are woken once its last slice is written (or at once when it
    /// keeps nothing): they then find the slices, or fetch for themselves.
    deinit {
        if holdsPermit { store.releaseFillPermit() }
        guard !flightClosed else { return }
        let (flights, key, flight) = (store.flights, key, flight)
        store.afterWrites { flights.close(key, flight) }
    }

    private func closeFlight() {
        guard !flightClosed else { return }
        flightClosed = true
        store.flights.close(key, flight)
    }

    /// The head to send the client for the upstream's final answer, the fill started (`start(with:now:)`): the
    /// same head, or for a widened range's 206 the client's own range (`Content-Range`, `Content-Length`) with
    /// the body trimmed to it (`clientShare`). Nil when that 206 does not hold the client's bytes.
    func begin(_ head: ResponseHead, now: Int) -> ResponseHead? {
        if start(with: head, now: now), let cutter {
            store.flights.announce(key, flight, bytes: cutter.position..<cutter.end, layout: cutter.layout)
        } else {
            closeFlight()  // nothing will be kept: nobody should wait for it
        }
        if let composition { return composed(head, composition) }
        guard let widened, head.status == 206 else { return head }  // a 200 (If-Range), a 416, an error: as is
        guard let parsed = try? head.parsingRawFields(),
            let range = parsed.headers["Content-Range"].flatMap(ContentRange.parse)
        else { return nil }
        let lower = widened.wanted.lowerBound
        let upper = min(widened.wanted.upperBound, range.bytes.upperBound)
        var fields = HTTPHeaders()
        for (name, value) in parsed.headers {
            if !ASCII.equalsLowercase(name, "content-range") && !ASCII.equalsLowercase(name, "content-length") {
                fields.add(name: name, value: value)
            }
        }
        if lower >= range.size {
            // The client's range starts past the object's end (the widened one did not): 416, as S3 answers it.
            window = (range.bytes.count, 0)
            fields.add(name: "Content-Range", value: "bytes */\(range.size)")
            if parsed.headers["Content-Length"] != nil { fields.add(name: "Content-Length", value: "0") }
            return ResponseHead(version: head.version, status: 416, headers: fields)
        }
        guard range.bytes.lowerBound <= lower, lower < upper else { return nil }
        window = (lower - range.bytes.lowerBound, upper - lower)
        fields.add(name: "Content-Range", value: "bytes \(lower)-\(upper - 1)/\(range.size)")
        if parsed.headers["Content-Length"] != nil { fields.add(name: "Content-Length", value: String(upper - lower)) }
        return ResponseHead(version: head.version, status: 206, reason: head.reason, headers: fields)
    }

    /// The head of a composed answer: the cached one, when the upstream's 206 carries the run of the stored
    /// version with a length; the client's part of the run is trimmed out of its body like a widened range's.
    private func composed(_ head: ResponseHead, _ composition: Composition) -> ResponseHead? {
        guard let parsed = try? head.parsingRawFields(), head.status == 206,
            StoredResponse(upstream: parsed)?.version == composition.version,
            parsed.headers["Content-Length"] != nil,
            let range = parsed.headers["Content-Range"].flatMap(ContentRange.parse),
            range.bytes.lowerBound == composition.run.lowerBound, range.bytes.upperBound >= composition.run.upperBound
        else {
            if head.status == 412 {
                // Overwritten since it was stored: what is kept of it goes, and the client retries (503).
                _ = try? store.invalidate(name)
                failure = .serviceUnavailable("the object changed while it was read; retry the request")
            } else {
                failure = .upstreamProtocol("the answer for the missing part of a cached object does not fit it")
            }
            return nil
        }
        let lower = max(composition.head.bytes.lowerBound, range.bytes.lowerBound)
        let upper = min(composition.head.bytes.upperBound, range.bytes.upperBound)
        window = (lower - range.bytes.lowerBound, max(0, upper - lower))
        try? store.markValidated(ObjectIdentity(name: name, version: composition.version), at: now())
        return ResponseHead(
            version: head.version, status: composition.head.status, headers: composition.head.fields)
    }

    private func now() -> Int { CredentialRefresher.wallClockMilliseconds() }

    /// How the next `count` bytes of a widened answer's body split: before the client's range (to the cache
    /// only), the client's, after it (to the cache only). Nil when the answer is not trimmed.
    func clientShare(of count: Int) -> (before: Int, take: Int, after: Int)? {
        guard var current = window else { return nil }
        let before = min(count, current.skip)
        current.skip -= before
        let take = min(count - before, current.take)
        current.take -= take
        window = current
        return (before, take, count - before - take)
    }

    /// What the answer's head means for the fill: a 200, or a 206 with its `Content-Range`, that the cache may
    /// keep starts cutting (and replaces a stored entry of another version); a 404 is remembered for
    /// `negative_ttl` when one is set; anything else fills nothing.
    /// Returns whether slices are being cut.
    @discardableResult
    func start(with head: ResponseHead, now: Int) -> Bool {
        cutter = nil
        guard let parsed = try? head.parsingRawFields() else { return false }
        let stored: StoredResponse
        switch Cacheability.response(parsed, config: config) {
        case .store(let kept): stored = kept
        case .rememberMissing:
            // Only a missing key: another 404 (`NoSuchBucket`, a load balancer's page) is passed on as it is.
            guard errorCode == "NoSuchKey" else { return false }
            try? store.rememberMissing(
                name, until: now + config.negativeTTL.milliseconds, now: now, unlessInvalidatedSince: mark, key: key)
            return false
        case .doNotStore: return false
        }
        guard let version = stored.version else { return false }
        let bytes: Range<Int>
        if parsed.status == 206 {
            guard let range = parsed.headers["Content-Range"].flatMap(ContentRange.parse) else { return false }
            bytes = range.bytes
        } else {
            bytes = 0..<stored.objectSize
        }
        // Bounded memory and a disk that keeps up: every fill cutting holds up to one slice, and a new fill starts
        // only while the write queue has room for a slice; otherwise the answer passes uncached, at the uncached
        // speed (a burst of misses faster than the disk keeps what the disk can write).
        guard holdsPermit || store.takeFillPermit(sliceSize: config.sliceSize) else { return false }
        holdsPermit = true
        let identity = ObjectIdentity(name: name, version: version)
        guard
            let entry = try? store.store(
                identity, stored: stored, sliceSize: config.sliceSize, now: now, unlessInvalidatedSince: mark,
                metaOnWriteQueue: true, key: key)
        else {
            return false
        }
        self.identity = identity
        cutter = SliceCutter(layout: entry.layout, bytes: bytes, skipping: entry.present)
        return true
    }

    /// Whether any of the next `count` body bytes are kept (else the caller does not copy them).
    func wants(_ count: Int) -> Bool { cutter?.wants(count) ?? false }

    /// The next `count` body bytes (`bytes` empty when `wants` said no): whole slices go to the store's write
    /// queue; one refused (the queue is over its budget) stops the fill.
    func consume(count: Int, bytes: [UInt8]) {
        guard var cutter, identity != nil else { return }
        self.cutter = nil  // the cutter's buffer is appended to in place, not copied
        let whole = cutter.consume(count: count, bytes: bytes)
        self.cutter = cutter
        if !whole.isEmpty {
            var waiting = blocked  // taken out and put back: no access to `blocked` spans a call
            blocked = []
            waiting += whole
            blocked = waiting
        }
        submitBlocked()
    }

    /// Whole slices the write queue refused (it was full): the upstream is not read until they are queued.
    private var blocked: [SliceCutter.Slice] = []

    /// Whether the transfer waits for the write queue (`SliceWriteQueue.notifyWhenRoom`).
    var isPaused: Bool { !blocked.isEmpty }

    /// Queues what is blocked; true when nothing is left waiting.
    @discardableResult
    func submitBlocked() -> Bool {
        guard let identity, !blocked.isEmpty else { return true }
        let waiting = blocked
        var queued = 0
        while queued < waiting.count {
            let slice = waiting[queued]
            guard store.submitSlice(identity, key: key, index: slice.index, bytes: slice.bytes) else { break }
            store.metrics.countFetched(bytes: slice.bytes.count)
            queued += 1
        }
        if queued > 0 { blocked = Array(waiting[queued...]) }  // none queued: `blocked` is already what waits
        return queued == waiting.count
    }

    /// Paused: asks the write queue to wake `waiter` when it has room; false when it has room already (call
    /// `submitBlocked` again).
    func waitForRoom(_ waiter: any FillWaiter) -> Bool {
        awaitsRoom = store.writes.notifyWhenRoom(for: blocked.first?.bytes.count ?? 0, waiter)
        return awaitsRoom
    }

    /// A wake from the write queue is arranged and has not come yet.
    private(set) var awaitsRoom = false

    /// The write queue's wake came (or a wake of this connection that may be it): ask again.
    func roomMayBeThere() { awaitsRoom = false }
}

/// A cached answer with one run of slices missing (issue 23 §3): the head the cache writes, the run fetched
/// upstream, and the present slices before and after it, opened at the decision.
struct Composition {
    let version: ObjectVersion
    let head: CachedHead
    /// The run's bytes of the object (whole slices).
    let run: Range<Int>
    let prefix: OpenedSlices
    let suffix: OpenedSlices
}
