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
func seedStore(config: String, bucket: String) -> (SliceStore, ObjectName, Int) {
    guard case .success(let configuration) = ConfigLoader.load(path: config, environment: [:]),
        let bucketConfig = configuration.buckets.first(where: { $0.name == bucket }), let cache = bucketConfig.cache,
        let upstream = configuration.upstreams[bucketConfig.upstream]
    else {
        say("error: no bucket \(bucket) with a cache in \(config)")
        exit(78)
    }
    do {
        let store = try SliceStore(directory: cache.directory, maxSize: cache.maxSize)
        return (store, ObjectName(upstream: upstream, bucket: bucket, key: ""), cache.sliceSize)
    } catch {
        say("error \(error)")
        exit(1)
    }
}

/// Byte `offset` of every seeded object (the e2e tests compute the same).
func seedByte(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 31 &+ 7 &+ offset >> 16) }

/// Now, as the daemon's cache reads it (validated now: fresh for `revalidate_after`).
func wallClockMilliseconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return spec.tv_sec * 1000 + spec.tv_nsec / 1_000_000
}

/// `seed`: KEY, KEY=SIZE or KEY=SIZE@ETAG, every slice present, validated now; `lookup`: `present KEY` or `absent KEY` per key.
func seedOrLookup(_ mode: String, config: String, bucket: String, keys: [String]) -> Never {
    let (store, bucketName, sliceSize) = seedStore(config: config, bucket: bucket)
    do {
        for argument in keys {
            // KEY, KEY=SIZE (default 100 bytes) or KEY=SIZE@ETAG (default "seed").
            let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
            let key = parts[0]
            // SIZE@ETAG: the upstream's ETag (a benchmark's revalidations then get 304s).
            let sizeAndTag = parts.count == 2 ? parts[1].split(separator: "@", maxSplits: 1).map(String.init) : []
            let size = sizeAndTag.first.flatMap { Int($0) } ?? 100
            let etag = sizeAndTag.count == 2 ? sizeAndTag[1] : "\"seed\""
            var name = bucketName
            name.key = key
            if mode == "lookup" {
                say((try store.lookup(name) == nil ? "absent " : "present ") + key)
                continue
            }
            let identity = ObjectIdentity(name: name, version: ObjectVersion(etag: etag))
            let stored = StoredResponse(
                objectSize: size,
                headers: [
                    "ETag": etag, "Content-Type": "application/x-seed",
                    "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT",
                ])
            let entry = try store.store(identity, stored: stored, sliceSize: sliceSize, now: wallClockMilliseconds())
            for index in 0..<entry.layout.sliceCount {
                let writer = try store.beginSlice(identity, index: index)
                try writer.append(entry.layout.bytes(ofSlice: index).map(seedByte))
                try store.commit(writer)
            }
            say("seeded " + key)
        }
    } catch {
        say("error \(error)")
        exit(1)
    }
    exit(0)
}
