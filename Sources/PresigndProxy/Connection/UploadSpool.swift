import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// A request body spooled to an unlinked temporary file, never to memory: for uploads that
/// arrive without a length (S3 and R2 refuse length-less PUTs) and for unwrapped `aws-chunked`
/// bodies whose checksum trailer must become a header. The file disappears when the spool does.
final class UploadSpool {
    private let fd: Int32
    private let staging: OwnedIOBuffer
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
        do {
            staging = try OwnedIOBuffer()
        } catch {
            close(fd)
            throw .internalError("\(error)")
        }
        self.fd = fd
        self.limit = limit
    }

    deinit {
        close(fd)
    }

    /// Moves `count` bytes from `source` into the spool.
    func append(from source: IOBuffer, count: Int) throws(ProxyError) {
        guard size + count <= limit else { throw .entityTooLarge }
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
