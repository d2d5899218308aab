/// A bucket's `[bucket.cache]` (or `cache = {…}`): the local read cache by slices (issue 23).
///
/// Parsed and checked, not yet served: until the connection consults the cache, `check-config` and the startup
/// log say so. Buckets that name the same `directory` share one store, whose `max_size` is the cap for all of
/// them together.
public struct CacheConfig: Sendable, Hashable {
    /// `directory`: where slices and their indexes live (required). Relative paths are resolved against the
    /// configuration file's directory.
    public var directory: String
    /// `max_size`: the most bytes of slices the directory holds, across every bucket sharing it (required).
    public var maxSize: Int
    /// `slice_size`: the unit of storage, upstream fetches and eviction. Default 1 MiB; a multiple of 64 KiB.
    public var sliceSize: Int = CacheConfig.defaultSliceSize
    /// `max_object_size`: larger objects are not cached. Default nil: any object up to `max_size`.
    public var maxObjectSize: Int? = nil
    /// `revalidate_after`: how long a cached object is served without asking upstream. Default 0: every use is
    /// revalidated with `If-None-Match`.
    public var revalidateAfter: ConfigDuration = .seconds(0)
    /// `include_prefixes`: object key prefixes that are cached; empty (default) caches every key.
    public var includePrefixes: [String] = []
    /// `negative_ttl`: how long a 404 is remembered. Default 0: not remembered (errors are never cached).
    public var negativeTTL: ConfigDuration = .seconds(0)
    /// `x_cache_header`: add `X-Cache: HIT|MISS|REVALIDATED` to answers. Default false.
    public var xCacheHeader: Bool = false

    public static let defaultSliceSize = 1 << 20
    /// Slices are a multiple of this (64 KiB: whole pages and hole-punch blocks on every file system in use).
    public static let sliceGranule = 64 << 10

    public init(directory: String, maxSize: Int) {
        self.directory = directory
        self.maxSize = maxSize
    }

    /// Whether the cache may hold `key` (`include_prefixes`).
    public func includes(key: String) -> Bool {
        includePrefixes.isEmpty || includePrefixes.contains { key.hasPrefix($0) }
    }

    /// The largest object the cache takes: `max_object_size`, never above `max_size`.
    public var largestObject: Int { min(maxObjectSize ?? maxSize, maxSize) }
}
