#if canImport(Glibc)
    import Glibc
#endif

/// What the cache's disk store reports: a failed system call (with `errno`) or state on disk it does not trust.
public enum CacheError: Error, Equatable, CustomStringConvertible {
    /// A system call failed: which one, on what path, and `errno`.
    case system(call: String, path: String, errno: Int32)
    /// The directory is held by another process (the daemon, or another `presignd cache` command).
    case directoryLocked(path: String)
    /// The object changed while a slice was written or read (another ETag, another size).
    case objectChanged
    /// A slice index or length outside the object.
    case sliceOutOfRange(index: Int)
    /// SHA-256 for a cache key failed (OpenSSL's message).
    case hashing(String)

    public var description: String {
        switch self {
        case .system(let call, let path, let code):
            return "\(call) \(path): \(String(cString: strerror(code)))"
        case .directoryLocked(let path):
            return "cache directory \(path) is in use by another process (the daemon holds it while running)"
        case .objectChanged:
            return "the object changed upstream while it was cached"
        case .sliceOutOfRange(let index):
            return "slice \(index) is outside the object, or not of its length"
        case .hashing(let message):
            return "cannot hash a cache key: \(message)"
        }
    }
}
