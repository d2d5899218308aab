import PresigndCache
import PresigndConfig

#if canImport(Glibc)
    import Glibc
#endif

// presignd-cache-probe seed|lookup CONFIG BUCKET KEY...: puts small objects into a bucket's cache directory, or
// says which are there, named as the daemon names them (ObjectName(upstream:bucket:key:) from the configuration),
// for the end-to-end tests of what the daemon does to a store it holds (invalidation on writes). Run while the
// daemon is stopped: the directory is locked while it runs.

/// Opens the bucket's store from the configuration; exits 78 when it cannot.
func seedStore(config: String, bucket: String) -> (SliceStore, ObjectName) {
    guard case .success(let configuration) = ConfigLoader.load(path: config, environment: [:]),
        let bucketConfig = configuration.buckets.first(where: { $0.name == bucket }), let cache = bucketConfig.cache,
        let upstream = configuration.upstreams[bucketConfig.upstream]
    else {
        say("error: no bucket \(bucket) with a cache in \(config)")
        exit(78)
    }
    do {
        let store = try SliceStore(directory: cache.directory, maxSize: cache.maxSize)
        return (store, ObjectName(upstream: upstream, bucket: bucket, key: ""))
    } catch {
        say("error \(error)")
        exit(1)
    }
}

/// `seed`: one whole slice per key; `lookup`: `present KEY` or `absent KEY` per key.
func seedOrLookup(_ mode: String, config: String, bucket: String, keys: [String]) -> Never {
    let (store, bucketName) = seedStore(config: config, bucket: bucket)
    do {
        for key in keys {
            var name = bucketName
            name.key = key
            if mode == "lookup" {
                say((try store.lookup(name) == nil ? "absent " : "present ") + key)
                continue
            }
            let identity = ObjectIdentity(name: name, version: ObjectVersion(etag: "\"seed\""))
            let stored = StoredResponse(objectSize: 100, headers: ["ETag": "\"seed\""])
            _ = try store.store(identity, stored: stored, sliceSize: CacheConfig.sliceGranule, now: 0)
            let writer = try store.beginSlice(identity, index: 0)
            try writer.append([UInt8](repeating: 0x73, count: 100))
            try store.commit(writer)
            say("seeded " + key)
        }
    } catch {
        say("error \(error)")
        exit(1)
    }
    exit(0)
}
