import PresigndCache
import PresigndPolicy

/// Which cached objects a write through presignd makes stale (issue 23 §8). Applied when the request is sent and
/// again when its answer arrives, so a read after the write's answer never finds the old object.
/// `indirect`: it rides in every request's plan, which is copied a few times per request; boxed, it is one
/// pointer there (nil when no cache is open).
indirect enum CacheInvalidation: Sendable, Equatable {
    /// One object: its entry and slices go, and a remembered 404.
    case object(ObjectName)
    /// Every object of a bucket on an upstream (DeleteObjects: its keys are read after routing; DeleteBucket).
    case bucket(upstream: String, bucket: String)

    /// What a request allowed as IAM `action` on `key` invalidates: nil for reads (`s3:Get*`, `s3:List*` and the
    /// read level's actions); any other action is taken as a write (deny by default: an action this list does not
    /// know drops what it might have changed). With a key, that object (uploads, copies into it, deletes, tags,
    /// ACLs, retention, restores); without one, the whole bucket (DeleteObjects, whose keys are read after routing;
    /// DeleteBucket; bucket settings, rare enough to pay a refill).
    static func of(action: String, upstream: String, bucket: String, key: String) -> CacheInvalidation? {
        if action.hasPrefix("s3:Get") || action.hasPrefix("s3:List") || AccessLevel.readActions.contains(action) {
            return nil
        }
        if key.isEmpty { return .bucket(upstream: upstream, bucket: bucket) }
        return .object(ObjectName(upstream: upstream, bucket: bucket, key: key))
    }

    /// Drops what it names from every open store: buckets mounted twice may cache in two directories. Returns the
    /// failures (a store whose files could not be moved away; its index no longer names them either way).
    func apply(to caches: CacheStoreMap) -> [(directory: String, error: CacheError)] {
        var failures: [(directory: String, error: CacheError)] = []
        for store in caches.stores.values {
            do {
                switch self {
                case .object(let name): try store.invalidate(name)
                case .bucket(let upstream, let bucket):
                    try store.invalidate(upstream: upstream, bucket: bucket, keyPrefix: "")
                }
            } catch {
                failures.append((store.directory, error))
            }
        }
        return failures
    }
}
