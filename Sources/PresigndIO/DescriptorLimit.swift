#if canImport(Glibc)
    import Glibc
#endif

/// The process's file-descriptor limit (`RLIMIT_NOFILE`) and how much of it is in use (issue 20).
///
/// A daemon that runs out of descriptors cannot accept, spool or connect upstream; nginx and HAProxy raise the soft
/// limit to the hard one at start (`worker_rlimit_nofile`, `ulimit-n`), and so does presignd.
public enum DescriptorLimit {
    /// A soft and a hard limit; `Int.max` stands for `RLIM_INFINITY`.
    public struct Values: Sendable, Equatable {
        public var soft: Int
        public var hard: Int

        public init(soft: Int, hard: Int) {
            self.soft = soft
            self.hard = hard
        }
    }

    /// The current limits.
    public static func current() throws(IOError) -> Values {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw .lastSystemError("getrlimit(RLIMIT_NOFILE)")
        }
        return Values(soft: value(limit.rlim_cur), hard: value(limit.rlim_max))
    }

    /// Raises the soft limit to the hard one and returns the limits in force afterwards. An infinite hard limit
    /// (root without a limit) raises the soft one to `nr_open`'s usual 1048576 instead, which the kernel accepts.
    public static func raiseSoftToHard() throws(IOError) -> Values {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw .lastSystemError("getrlimit(RLIMIT_NOFILE)")
        }
        let target = limit.rlim_max == infinity ? min(limit.rlim_max, 1 << 20) : limit.rlim_max
        if limit.rlim_cur != infinity && limit.rlim_cur < target {
            limit.rlim_cur = target
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
                throw .lastSystemError("setrlimit(RLIMIT_NOFILE)")
            }
        }
        return try current()
    }

    /// Descriptors open in this process (the entries of `/proc/self/fd`, less the one reading it); nil where
    /// `/proc` cannot be read. Walks a directory: for a scrape, not for a hot path.
    public static func openCount() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0.first == UInt8(ascii: ".") }
            if !isDot { count += 1 }
        }
        return max(0, count - 1)
    }

    /// `RLIM_INFINITY` (all bits set; the macro does not import).
    private static let infinity = rlim_t.max

    private static func value(_ limit: rlim_t) -> Int {
        limit == infinity || limit > rlim_t(Int.max) ? Int.max : Int(limit)
    }
}
