/// Counts by key on the request path without hashing the key on every request: each key gets a slot once, and
/// the last slot used is tried first (consecutive requests mostly share bucket, method, status class and
/// principal; comparing a key costs less than hashing it).
struct SlotCounter<Key: Hashable & Sendable>: Sendable {
    private var keys: [Key] = []
    private var counts: [Int] = []
    private var slots: [Key: Int] = [:]
    private var lastSlot: Int?

    mutating func count(_ key: Key, by amount: Int = 1) {
        if let slot = lastSlot, keys[slot] == key {
            counts[slot] += amount
            return
        }
        let slot: Int
        if let known = slots[key] {
            slot = known
        } else {
            slot = keys.count
            keys.append(key)
            counts.append(0)
            slots[key] = slot
        }
        counts[slot] += amount
        lastSlot = slot
    }

    /// The counts by key (for rendering, off the request path).
    var totals: [Key: Int] {
        Dictionary(zip(keys, counts), uniquingKeysWith: +)
    }
}
