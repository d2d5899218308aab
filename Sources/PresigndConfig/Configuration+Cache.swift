/// A cache directory as the daemon and `presignd cache` open it: one store per directory, whose `max_size` is the
/// cap of every bucket naming it (the loader refuses two different values).
public struct CacheDirectory: Sendable, Hashable {
    public var path: String
    public var maxSize: Int

    public init(path: String, maxSize: Int) {
        self.path = path
        self.maxSize = maxSize
    }
}

extension Configuration {
    /// The directories the buckets' `[bucket.cache]` name, each once with its cap, in file order.
    public var cacheDirectories: [CacheDirectory] {
        var result: [CacheDirectory] = []
        for cache in buckets.compactMap(\.cache) where !result.contains(where: { $0.path == cache.directory }) {
            result.append(CacheDirectory(path: cache.directory, maxSize: cache.maxSize))
        }
        return result
    }
}
