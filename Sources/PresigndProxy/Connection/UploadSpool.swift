import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// A request body spooled to an unlinked temporary file, never to memory: for uploads that
/// arrive without a length (S3 and R2 refuse length-less PUTs) and for unwrapped `aws-chunked`
/// bodies whose checksum trailer must become a header. The file disappears when the spool does.
///
/// Its space comes out of the shared `SpoolBudget` (issue 20): the declared length up front when there is one,
/// otherwise a mebibyte at a time as bytes arrive; a spool that cannot have its space throws `slowDown`, one whose
/// disk is full throws `insufficientStorage`. The reservation goes back when the spool does.
final class UploadSpool {
    private let fd: Int32
    private let staging: OwnedIOBuffer
    private let limit: Int
    private let budget: SpoolBudget
    /// Bytes taken from the budget so far.
    private var reserved = 0
    /// Without a declared length, space is reserved in steps of this size.
    static let reservationStep = 1 << 20
    /// Bytes accepted so far.
    private(set) var size = 0
    /// Bytes handed to the upstream so far (after `finish`).
    private(set) var sent = 0

    private static let flushThreshold = 256 * 1024

    init(directory: String, limit: Int, budget: SpoolBudget, declaredLength: Int?) throws(ProxyError) {
        if let declaredLength {
            guard budget.reserve(declaredLength) else { throw Self.overBudget }
            reserved = declaredLength
        }
        self.budget = budget
        let fd = Self.createUnlinked(in: directory)
        guard fd >= 0 else {
            let code = errno
            budget.release(reserved)
            if code == ENOSPC || code == EDQUOT { throw .insufficientStorage }
            throw .internalError("cannot create a spool file in \(directory): \(String(cString: strerror(code)))")
        }
        do {
            staging = try OwnedIOBuffer()
        } catch {
            close(fd)
            budget.release(reserved)
            throw .internalError("\(error)")
        }
        self.fd = fd
        self.limit = limit
    }

    deinit {
        close(fd)
        budget.release(reserved)
    }

    /// `O_TMPFILE` (Linux's `__O_TMPFILE`, not exported by the Glibc module; the same value on x86-64 and arm64).
    private static let temporaryFileFlag: Int32 = 0o20_000_000

    /// A file that never has a name (`O_TMPFILE`): a crash leaves nothing behind. Where the file system cannot
    /// (EOPNOTSUPP, EISDIR on old kernels), `mkstemp` and an `unlink` at once. -1 with `errno` set on failure.
    private static func createUnlinked(in directory: String) -> Int32 {
        let flags = O_RDWR | O_CLOEXEC | O_DIRECTORY | temporaryFileFlag
        let fd = open(directory, flags, mode_t(0o600))
        if fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) { return fd }
        var template = Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast())
        template.append(contentsOf: "presignd-spool-XXXXXX".utf8CString)
        let named = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard named >= 0 else { return -1 }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(named, F_SETFD, FD_CLOEXEC)
        return named
    }

    static let overBudget = ProxyError.slowDown("the spool space for uploads (max_spool_total) is in use")

    /// Moves `count` bytes from `source` into the spool.
    func append(from source: IOBuffer, count: Int) throws(ProxyError) {
        guard size + count <= limit else { throw .entityTooLarge }
        if size + count > reserved {
            let step = max(size + count - reserved, Self.reservationStep)
            guard budget.reserve(step) else { throw Self.overBudget }
            reserved += step
        }
        do {
            try source.move(to: staging.buffer, count: count)
        } catch {
            throw .internalError("\(error)")
        }
        size += count
        if staging.buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Writes every staged byte and rewinds for reading.
    func finish() throws(ProxyError) {
        try flush()
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw .internalError("spool seek failed") }
    }

    /// Starts handing the spooled bytes over again from the first (a retry, issue 21 §3).
    func rewind() throws(ProxyError) {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw .internalError("spool seek failed") }
        sent = 0
    }

    /// Every spooled byte, read back after `finish` without moving the read offset (a DeleteObjects body,
    /// bounded by the spool's limit, is checked before it is sent).
    func contents() throws(ProxyError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, size - done, off_t(done)) }
            guard got > 0 else { throw .internalError("spool read failed") }
            done += got
        }
        return bytes
    }

    private func flush() throws(ProxyError) {
        do {
            while !staging.buffer.isEmpty {
                _ = try staging.buffer.write(to: fd)
            }
        } catch {
            if case .system(_, let code) = error, code == ENOSPC || code == EDQUOT { throw .insufficientStorage }
            throw .internalError("spool write failed: \(error)")
        }
    }

    /// Reads spooled bytes into `output` until it holds `target` bytes or the file is done.
    /// Returns true once every byte has been handed over.
    func fill(_ output: IOBuffer, upTo target: Int) throws(ProxyError) -> Bool {
        while sent < size && output.count < target {
            let got: Int
            do {
                got = try output.read(from: fd, upTo: min(Self.flushThreshold, size - sent))
            } catch {
                throw .internalError("spool read failed: \(error)")
            }
            guard got > 0 else { throw .internalError("spool read failed: the file is shorter than what was written") }
            sent += got
        }
        return sent == size
    }
}
