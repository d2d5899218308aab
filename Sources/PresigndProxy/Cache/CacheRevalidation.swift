import PresigndCache

/// A revalidation in flight (issue 23 §3): the request went upstream with `If-None-Match`; a 304 is answered
/// with `head` from `slices` (opened before the request was sent, so a 304 always has their bytes) and, for an
/// answer of more slices than one write queues, `rest` opened one by one after them (`CachedBodySender`: a slice
/// evicted meanwhile cuts the answer, as for any cached answer); anything else passes through
/// (`CacheRead.outcome`).
final class CacheRevalidation {
    let store: SliceStore
    let entry: CachedObject
    let head: CachedHead
    let slices: OpenedSlices
    let rest: CachedBodySender?

    init(store: SliceStore, entry: CachedObject, head: CachedHead, slices: OpenedSlices, rest: CachedBodySender?) {
        self.store = store
        self.entry = entry
        self.head = head
        self.slices = slices
        self.rest = rest
    }
}
