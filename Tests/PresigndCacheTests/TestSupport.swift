import Foundation
import PresigndCache
import PresigndConfig
import PresigndHTTP1
import PresigndTestSupport

/// A cache configuration for tests: 1 GiB in a directory nobody opens.
func cacheConfig(_ adjust: (inout CacheConfig) -> Void = { _ in }) -> CacheConfig {
    var config = CacheConfig(directory: "/nonexistent", maxSize: 1 << 30)
    adjust(&config)
    return config
}

/// An upstream answer with these fields.
func response(_ status: Int, _ fields: [(String, String)]) -> ResponseHead {
    ResponseHead(status: status, headers: HTTPHeaders(fields))
}

/// An object name in bucket `b` of upstream `u`.
func objectName(_ key: String, bucket: String = "b", upstream: String = "u") -> ObjectName {
    ObjectName(upstream: upstream, bucket: bucket, key: key)
}

/// The content tests write into slices: a pattern that differs per object version and offset.
func pattern(_ seed: Int, _ bytes: Range<Int>) -> [UInt8] {
    bytes.map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed &* 101 &+ $0 >> 12) }
}

/// A store in a fresh scratch directory; the directory lives as long as the returned value.
struct ScratchStore {
    let scratch: TemporaryDirectory
    var directory: String { scratch.path + "/cache" }

    init() throws { scratch = try TemporaryDirectory() }

    func open(maxSize: Int = 1 << 30) throws -> SliceStore { try SliceStore(directory: directory, maxSize: maxSize) }
}

extension SliceStore {
    /// Stores `identity` and writes the slices `indexes` whole with `pattern(seed, …)`.
    func fill(_ identity: ObjectIdentity, size: Int, sliceSize: Int, seed: Int, slices indexes: [Int]? = nil)
        throws -> CachedObject
    {
        let stored = StoredResponse(objectSize: size, headers: ["ETag": identity.version.etag])
        let entry = try store(identity, stored: stored, sliceSize: sliceSize, now: 1000)
        for index in indexes ?? Array(0..<entry.layout.sliceCount) {
            let writer = try beginSlice(identity, index: index)
            try writer.append(pattern(seed, entry.layout.bytes(ofSlice: index)))
            try commit(writer)
        }
        return try lookup(identity.name) ?? entry
    }

    /// The bytes of slice `index` inside `bytes`, read through `openSlice`; nil when not present.
    func read(_ identity: ObjectIdentity, index: Int, within bytes: Range<Int>) throws -> [UInt8]? {
        guard let slice = try openSlice(identity, index: index, within: bytes) else { return nil }
        return try slice.read()
    }
}
