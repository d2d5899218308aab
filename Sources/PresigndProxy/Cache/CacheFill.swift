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

    init(store: SliceStore, name: ObjectName, config: CacheConfig) {
        self.store = store
        self.name = name
        self.config = config
    }

    /// What the answer's head means for the fill: a 200, or a 206 with its `Content-Range`, that the cache may
    /// keep starts cutting (and replaces a stored entry of another version); anything else fills nothing.
    /// Returns whether slices are being cut.
    @discardableResult
    func start(with head: ResponseHead, now: Int) -> Bool {
        cutter = nil
        guard let parsed = try? head.parsingRawFields(),
            case .store(let stored) = Cacheability.response(parsed, config: config),
            let version = stored.version
        else { return false }
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
