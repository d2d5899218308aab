#if canImport(Glibc)
    import Glibc
#endif

/// The store's system calls, each checked and turned into `CacheError.system` (STYLE: every C call's result).
enum FileSystem {
    static func fail(_ call: String, _ path: String) -> CacheError { .system(call: call, path: path, errno: errno) }

    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(CacheError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw fail("open", path) }
        }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)  // Linux releases the descriptor even when close reports EINTR or EIO
    }

    /// Writes all of `bytes` at the file's position.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(CacheError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw fail("write", path)
            }
            offset += written
        }
    }

    /// Runs `body` over the bytes of an array, keeping its typed error (`withUnsafeBytes` only rethrows untyped).
    static func withBytes(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(CacheError) -> Void)
        throws(CacheError)
    {
        var failure: CacheError? = nil
        bytes.withUnsafeBytes { raw in
            do throws(CacheError) { try body(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// The whole content of a small file (metadata), at most `limit` bytes; nil when it is larger.
    static func readSmallFile(_ path: String, limit: Int = 1 << 20) throws(CacheError) -> [UInt8]? {
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw fail("read", path)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { return nil }
        }
    }

    static func fdatasync(_ fd: Int32, path: String) throws(CacheError) {
        guard Glibc.fdatasync(fd) == 0 else { throw fail("fdatasync", path) }
    }

    static func rename(_ from: String, _ to: String) throws(CacheError) {
        guard Glibc.rename(from, to) == 0 else { throw fail("rename", to) }
    }

    /// Removes a file; a file already gone is not an error (eviction and invalidation may race a scan).
    static func unlink(_ path: String) throws(CacheError) {
        guard Glibc.unlink(path) == 0 || errno == ENOENT else { throw fail("unlink", path) }
    }

    /// Removes an empty directory; one still holding a fill's temporary file stays (the next check removes it).
    static func removeDirectory(_ path: String) throws(CacheError) {
        guard Glibc.rmdir(path) == 0 || errno == ENOENT || errno == ENOTEMPTY else { throw fail("rmdir", path) }
    }

    /// Creates a directory; one that exists already is fine.
    static func makeDirectory(_ path: String) throws(CacheError) {
        guard Glibc.mkdir(path, 0o700) == 0 || errno == EEXIST else { throw fail("mkdir", path) }
    }

    /// What a name is, without following symbolic links (the check on open never leaves the directory).
    enum FileType: Equatable {
        case regular(size: Int)
        case directory
        /// A symbolic link, a socket, a device: never the store's.
        case other
    }

    static func fileType(_ path: String) throws(CacheError) -> FileType {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw fail("lstat", path) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .regular(size: Int(status.st_size))
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The names in a directory, without `.` and `..`.
    static func entries(_ path: String) throws(CacheError) -> [String] {
        guard let directory = opendir(path) else { throw fail("opendir", path) }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw fail("readdir", path) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Takes the directory's `lock` file exclusively without waiting: one process owns a store at a time.
    static func lockDirectory(_ directory: String) throws(CacheError) -> Int32 {
        let path = directory + "/lock"
        let fd = try open(path, O_RDWR | O_CREAT)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw .directoryLocked(path: directory) }
            throw .system(call: "flock", path: path, errno: code)
        }
        return fd
    }

    /// Wall-clock milliseconds since the epoch (entry times outlive the process).
    static func nowMilliseconds() -> Int {
        var now = timespec()
        precondition(clock_gettime(CLOCK_REALTIME, &now) == 0, "CLOCK_REALTIME is always there")
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}
