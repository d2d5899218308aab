import PresigndCache

/// The rest of a cached answer with more slices than one write queues (issue 23 §5: a 1 GiB object is 1024
/// slices of 1 MiB): after the head and the first `CacheRead.maxSlicesPerAnswer` slices, the connection opens the
/// next slices one at a time as the client's output drains (`ClientConnection.pumpCachedBody`), each under the
/// store's lock, so an answer holds a few descriptors whatever its size. A slice evicted meanwhile cuts the
/// answer (its head promised a length): the client sees a short body, never another object's bytes.
final class CachedBodySender {
    let store: SliceStore
    let identity: ObjectIdentity
    let key: CacheKey
    /// The object's bytes the answer's body carries.
    let bytes: Range<Int>
    /// The next slice to queue, and the end of the answer's slices.
    private(set) var next: Int
    let end: Int

    init(store: SliceStore, identity: ObjectIdentity, key: CacheKey, bytes: Range<Int>, slices: Range<Int>) {
        self.store = store
        self.identity = identity
        self.key = key
        self.bytes = bytes
        self.next = slices.lowerBound
        self.end = slices.upperBound
    }

    var isDone: Bool { next >= end }

    /// Body bytes queued for the client so far (the first slices' included): an access-log line of a cut answer
    /// says at most this many went out.
    var queuedBytes = 0
    /// The answer's access-log line, written once its last slice is queued or when it is cut.
    var log: (response: CachedResponse, requestID: String)?
    /// `min_body_rate` for the client reading the answer (`ClientConnection.checkSlowPeer`).
    var rateMeter = BodyRateMeter()

    /// Opens the next slice (nil when it is no longer present: the answer must be cut).
    func openNext() -> OpenSlice? {
        guard next < end, let slice = try? store.openSlice(identity, key: key, index: next, within: bytes) else {
            return nil
        }
        next += 1
        queuedBytes += slice.length
        return slice
    }
}
