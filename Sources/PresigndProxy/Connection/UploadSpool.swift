import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A request body spooled to an unlinked temporary file, never to memory: for uploads that
/// arrive without a length (S3 and R2 refuse length-less PUTs) and for unwrapped `aws-chunked`
/// bodies whose checksum trailer must become a header. The file disappears when the spool does.
final class UploadSpool {
    private let fd: Int32
    private let staging: OpaquePointer
    private let limit: Int
    /// Bytes accepted so far.
    private(set) var size = 0
    /// Bytes handed to the upstream so far (after `finish`).
    private(set) var sent = 0

    private static let flushThreshold = 256 * 1024

    init(directory: String, limit: Int) throws(ProxyError) {
        var template = Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast())
        template.append(contentsOf: "presignd-spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw .internalError("cannot create a spool file in \(directory): \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        guard let staging = evbuffer_new() else {
            close(fd)
            throw .internalError("evbuffer_new failed")
        }
        self.fd = fd
        self.staging = staging
        self.limit = limit
    }

    deinit {
        evbuffer_free(staging)
        close(fd)
    }

    /// Moves `count` bytes from `source` into the spool.
    func append(from source: OpaquePointer, count: Int) throws(ProxyError) {
        guard size + count <= limit else { throw .entityTooLarge }
        EvBuffer.move(from: source, to: staging, count: count)
        size += count
        if EvBuffer.length(staging) >= Self.flushThreshold { try flush() }
    }

    /// Writes every staged byte and rewinds for reading.
    func finish() throws(ProxyError) {
        try flush()
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw .internalError("spool seek failed") }
    }

    private func flush() throws(ProxyError) {
        while EvBuffer.length(staging) > 0 {
            let written = evbuffer_write(staging, fd)
            if written < 0 {
                if errno == EINTR { continue }
                throw .internalError("spool write failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Reads spooled bytes into `output` until it holds `target` bytes or the file is done.
    /// Returns true once every byte has been handed over.
    func fill(_ output: OpaquePointer, upTo target: Int) throws(ProxyError) -> Bool {
        while sent < size && EvBuffer.length(output) < target {
            let want = min(Self.flushThreshold, size - sent)
            var vector = iovec()
            guard evbuffer_reserve_space(output, want, &vector, 1) >= 1 else {
                throw .internalError("evbuffer_reserve_space failed")
            }
            let got = read(fd, vector.iov_base, min(want, vector.iov_len))
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw .internalError("spool read failed") }
            vector.iov_len = got
            evbuffer_commit_space(output, &vector, 1)
            sent += got
        }
        return sent == size
    }
}
