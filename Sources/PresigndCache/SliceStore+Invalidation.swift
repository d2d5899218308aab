/// Invalidation (a write through presignd, the admin endpoint, `presignd cache purge`) and remembered 404s.
extension SliceStore {
    /// Drops `name` at once: its slices and its entry; a fill under way fails its commit (`objectChanged`).
    /// Returns the number of objects dropped (0 or 1).
    @discardableResult
    public func invalidate(_ name: ObjectName) throws(CacheError) -> Int {
        let key = try Self.key(name)
        let root = objectsRoot
        // By key, not by a scan: a write through presignd pays one hash, whatever the store holds.
        let dropped = try state.withLock { (state) throws(CacheError) -> Int in
            state.invalidated[key.bucket(Self.invalidationBuckets)] += 1
            if state.missing[key]?.name == name { state.missing[key] = nil }
            guard state.entries[key]?.meta.identity.name == name else { return 0 }
            try Self.remove(key, in: &state, root: root, keepDirectory: false)
            return 1
        }
        emptyTrash()
        metrics.setSize(state.withLock { $0.eviction.totalSize })
        return dropped
    }

    /// Drops every object of `bucket` (on `upstream`, when given) whose key starts with `keyPrefix`.
    @discardableResult
    public func invalidate(upstream: String?, bucket: String?, keyPrefix: String) throws(CacheError) -> Int {
        try invalidate { name in
            (upstream == nil || name.upstream == upstream) && (bucket == nil || name.bucket == bucket)
                && name.key.hasPrefix(keyPrefix)
        }
    }

    /// Drops every object whose name `matches`; returns how many.
    public func invalidate(where matches: (ObjectName) -> Bool) throws(CacheError) -> Int {
        let root = objectsRoot
        let dropped = try state.withLock { (state) throws(CacheError) -> Int in
            state.bulkInvalidations += 1
            state.missing = state.missing.filter { !matches($0.value.name) }
            let keys = state.entries.filter { matches($0.value.meta.identity.name) }.map(\.key)
            for key in keys { try Self.remove(key, in: &state, root: root, keepDirectory: false) }
            return keys.count
        }
        emptyTrash()
        metrics.setSize(state.withLock { $0.eviction.totalSize })
        return dropped
    }

    /// The most 404s remembered at once: a client asking for many keys that do not exist cannot grow the table.
    public static let maxRememberedMissing = 10_000

    /// Remembers a 404 for `name` until `until` (wall-clock milliseconds; `negative_ttl`). Memory only. With the
    /// table full, expired names go first; still full, the 404 is not remembered (the next read asks upstream).
    public func rememberMissing(
        _ name: ObjectName, until: Int, now: Int, unlessInvalidatedSince mark: InvalidationMark? = nil,
        key: CacheKey? = nil
    ) throws(CacheError) {
        let key = try Self.key(name, given: key)
        state.withLock { state in
            if let mark, state.mark(key) != mark { return }  // a write since the read was sent: not a 404 now
            if state.missing.count >= Self.maxRememberedMissing && state.missing[key] == nil {
                state.missing = state.missing.filter { $0.value.until > now }
                if state.missing.count >= Self.maxRememberedMissing { return }
            }
            state.missing[key] = (name, until)
        }
    }

    /// Whether a remembered 404 for `name` still holds at `now`.
    public func isKnownMissing(_ name: ObjectName, key: CacheKey? = nil, now: Int) throws(CacheError) -> Bool {
        let key = try Self.key(name, given: key)
        return state.withLock { state in
            guard let missing = state.missing[key], missing.name == name else { return false }
            if missing.until > now { return true }
            state.missing[key] = nil
            return false
        }
    }
}
