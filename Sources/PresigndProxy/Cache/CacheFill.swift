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
    let config: CacheConfig
    /// Set when the answer's head was cacheable: the version the slices belong to, and the cutter.
    private(set) var identity: ObjectIdentity?
    private(set) var cutter: SliceCutter?

    /// The client's range when the upstream request asks for whole slices instead (`WidenedRange`).
    let widened: WidenedRange?
    /// Of a widened answer's body: the bytes before the client's (to the cache only) and the client's own.
    private var window: (skip: Int, take: Int)?

    /// This fill's entry in the store's single-flight table: misses of the same bytes wait for it.
    private let flight: FillFlights.FlightID
    private var flightClosed = false

    init(store: SliceStore, name: ObjectName, config: CacheConfig, widened: WidenedRange? = nil) {
        self.store = store
        self.name = name
        self.config = config
        self.widened = widened
        flight = store.flights.open(name)
    }

    /// However the exchange ended, its waiters are woken once its last slice is written (or at once when it
    /// keeps nothing): they then find the slices, or fetch for themselves.
    deinit {
        guard !flightClosed else { return }
        let (flights, name, flight) = (store.flights, name, flight)
        store.afterWrites { flights.close(name, flight) }
    }

    private func closeFlight() {
        guard !flightClosed else { return }
        flightClosed = true
        store.flights.close(name, flight)
    }

    /// The head to send the client for the upstream's final answer, the fill started (`start(with:now:)`): the
    /// same head, or for a widened range's 206 the client's own range (`Content-Range`, `Content-Length`) with
    /// the body trimmed to it (`clientShare`). Nil when that 206 does not hold the client's bytes.
    func begin(_ head: ResponseHead, now: Int) -> ResponseHead? {
        if start(with: head, now: now), let cutter {
            store.flights.announce(
                name, flight, bytes: cutter.position..<cutter.end, objectSize: cutter.layout.objectSize)
        } else {
            closeFlight()  // nothing will be kept: nobody should wait for it
        }
        guard let widened, head.status == 206 else { return head }  // a 200 (If-Range), a 416, an error: as is
        guard let parsed = try? head.parsingRawFields(),
            let range = parsed.headers["Content-Range"].flatMap(ContentRange.parse)
        else { return nil }
        let lower = widened.wanted.lowerBound
        let upper = min(widened.wanted.upperBound, range.bytes.upperBound)
        var fields = HTTPHeaders()
        for (name, value) in parsed.headers {
            let lowered = ASCII.lowercased(name)
            if lowered != "content-range" && lowered != "content-length" { fields.add(name: name, value: value) }
        }
        if lower >= range.size {
            // The client's range starts past the object's end (the widened one did not): 416, as S3 answers it.
            window = (range.bytes.count, 0)
            fields.add(name: "Content-Range", value: "bytes */\(range.size)")
            fields.add(name: "Content-Length", value: "0")
            return ResponseHead(version: head.version, status: 416, headers: fields)
        }
        guard range.bytes.lowerBound <= lower, lower < upper else { return nil }
        window = (lower - range.bytes.lowerBound, upper - lower)
        fields.add(name: "Content-Range", value: "bytes \(lower)-\(upper - 1)/\(range.size)")
        if parsed.headers["Content-Length"] != nil { fields.add(name: "Content-Length", value: String(upper - lower)) }
        return ResponseHead(version: head.version, status: 206, reason: head.reason, headers: fields)
    }

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
            try? store.rememberMissing(name, until: now + config.negativeTTL.milliseconds, now: now)
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
        let identity = ObjectIdentity(name: name, version: version)
        guard let entry = try? store.store(identity, stored: stored, sliceSize: config.sliceSize, now: now) else {
            return false
        }
        self.identity = identity
        cutter = SliceCutter(layout: entry.layout, bytes: bytes)
        return true
    }

    /// Whether any of the next `count` body bytes are kept (else the caller does not copy them).
    func wants(_ count: Int) -> Bool { cutter?.wants(count) ?? false }

    /// The next `count` body bytes (`bytes` empty when `wants` said no): whole slices go to the store's write
    /// queue; one refused (the queue is over its budget) stops the fill.
    func consume(count: Int, bytes: [UInt8]) {
        guard var cutter, let identity else { return }
        self.cutter = nil  // the cutter's buffer is appended to in place, not copied
        for slice in cutter.consume(count: count, bytes: bytes) {
            guard store.submitSlice(identity, index: slice.index, bytes: slice.bytes) else {
                cutter.stop()
                break
            }
            store.metrics.countFetched(bytes: slice.bytes.count)
        }
        self.cutter = cutter
    }
}
