import PresigndCache

/// A revalidation in flight (issue 23 §3): the request went upstream with `If-None-Match`; a 304 is answered
/// with `head` from `slices` (opened before the request was sent, so a 304 always has its bytes), anything else
/// passes through (`CacheRead.outcome`).
final class CacheRevalidation {
    let store: SliceStore
    let entry: CachedObject
    let head: CachedHead
    let slices: OpenedSlices

    init(store: SliceStore, entry: CachedObject, head: CachedHead, slices: OpenedSlices) {
        self.store = store
        self.entry = entry
        self.head = head
        self.slices = slices
    }
}
