#if canImport(Glibc)
    import Glibc
#endif

/// A present slice opened for reading: a descriptor, and the part of it to send. Non-copyable, so the descriptor
/// has one owner: hand it to `evbuffer_add_file` (which closes it) with `takeDescriptor()`, or let it go (closed).
///
/// An eviction or invalidation after the open unlinks the name, not the file: the bytes stay readable through
/// the descriptor until it is closed, so a send in progress is never cut short or mixed.
public struct OpenSlice: ~Copyable {
    public let descriptor: Int32
    /// Where in the slice file the requested bytes start, and how many.
    public let offset: Int
    public let length: Int

    /// The descriptor, now owned by the caller (to close, or to give to `evbuffer_add_file`).
    public consuming func takeDescriptor() -> Int32 {
        let descriptor = self.descriptor
        discard self
        return descriptor
    }

    /// Reads the bytes (tests, and a TLS client connection that cannot use `sendfile`).
    public func read() throws(CacheError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let count = bytes.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + done, length - done, off_t(offset + done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw count == 0 ? .objectChanged : FileSystem.fail("pread", "slice") }
            done += count
        }
        return bytes
    }

    deinit { FileSystem.close(descriptor) }
}
