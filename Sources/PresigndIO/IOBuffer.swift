internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A non-owning view of a libevent `evbuffer`: a stream's input or output, or an `OwnedIOBuffer`. Valid while its
/// owner lives. Moves between buffers hand whole chains over without copying.
public struct IOBuffer {
    /// The `evbuffer`, for the proxy code that still calls libevent itself until it is ported.
    package let pointer: OpaquePointer

    package init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Bytes buffered.
    public var count: Int {
        evbuffer_get_length(pointer)
    }

    public var isEmpty: Bool { count == 0 }

    /// Drops the first `n` bytes (all of them when fewer are buffered).
    public func drain(_ n: Int) {
        guard n > 0 else { return }
        // Fails only on a buffer whose start is frozen, which PresigndIO never makes or hands out.
        let status = evbuffer_drain(pointer, n)
        precondition(status == 0, "evbuffer_drain on a frozen buffer")
    }

    public func append(_ bytes: [UInt8]) throws(IOError) {
        try append(bytes, from: 0)
    }

    /// Appends `bytes[offset...]` (what a direct send left).
    public func append(_ bytes: [UInt8], from offset: Int) throws(IOError) {
        precondition(offset >= 0 && offset <= bytes.count, "offset outside the bytes")
        guard offset < bytes.count else { return }
        let status = bytes.withUnsafeBytes { raw in evbuffer_add(pointer, raw.baseAddress! + offset, raw.count - offset) }
        guard status == 0 else { throw .outOfMemory("evbuffer_add") }
    }

    public func append(_ text: StaticString) throws(IOError) {
        let status = text.withUTF8Buffer { raw in evbuffer_add(pointer, raw.baseAddress, raw.count) }
        guard status == 0 else { throw .outOfMemory("evbuffer_add") }
    }

    public func append(_ bytes: UnsafeRawBufferPointer) throws(IOError) {
        guard bytes.count > 0 else { return }
        guard evbuffer_add(pointer, bytes.baseAddress, bytes.count) == 0 else { throw .outOfMemory("evbuffer_add") }
    }

    /// Appends everything `other` holds and leaves it empty (`evbuffer_add_buffer`: its chains change hands,
    /// nothing is copied).
    public func append(takingAllOf other: IOBuffer) throws(IOError) {
        guard evbuffer_add_buffer(pointer, other.pointer) == 0 else { throw .outOfMemory("evbuffer_add_buffer") }
    }

    /// Moves the first `count` bytes (or all, when fewer are buffered) to the end of `destination`
    /// (`evbuffer_remove_buffer`: whole chains move without copying, only a split chain's part is copied).
    /// Returns how many moved.
    @discardableResult
    public func move(to destination: IOBuffer, count: Int) throws(IOError) -> Int {
        guard count > 0 else { return 0 }
        let moved = evbuffer_remove_buffer(pointer, destination.pointer, count)
        guard moved >= 0 else { throw .outOfMemory("evbuffer_remove_buffer") }
        return Int(moved)
    }

    /// Calls `body` with the first contiguous segment (empty when nothing is buffered) and the total number of
    /// buffered bytes, which may be more than the segment holds.
    ///
    /// Inlinable so that each caller's closure is specialized in place: every decoder step goes through here.
    @inlinable
    public func withFirstSegment<T, E: Error>(
        _ body: (UnsafeRawBufferPointer, _ available: Int) throws(E) -> T
    ) throws(E) -> T {
        let (segment, available) = firstSegment()
        return try body(segment, available)
    }

    /// The first contiguous segment and the total buffered; only `withFirstSegment` hands the pointer on, for
    /// the length of its call.
    @usableFromInline
    internal func firstSegment() -> (UnsafeRawBufferPointer, Int) {
        let available = evbuffer_get_length(pointer)
        var vector = iovec()
        guard available > 0, evbuffer_peek(pointer, -1, nil, &vector, 1) > 0 else {
            return (UnsafeRawBufferPointer(start: nil, count: 0), 0)
        }
        return (UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len), available)
    }

    /// Calls `body` with each contiguous segment of the first `count` bytes (or all, when fewer are buffered), in
    /// order, without copying or draining them (`evbuffer_peek`): to checksum bytes that then move on.
    public func forEachSegment<E: Error>(
        prefix count: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> Void
    ) throws(E) {
        let length = min(count, evbuffer_get_length(pointer))
        guard length > 0 else { return }
        let needed = Int(evbuffer_peek(pointer, length, nil, nil, 0))
        guard needed > 0 else { return }
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: needed) { (vectors) throws(E) in
            let filled = Int(evbuffer_peek(pointer, length, nil, vectors.baseAddress, Int32(needed)))
            var left = length
            for index in 0..<min(filled, needed) where left > 0 {
                let take = min(left, vectors[index].iov_len)
                try body(UnsafeRawBufferPointer(start: vectors[index].iov_base, count: take))
                left -= take
            }
        }
    }

    /// Makes the first `count` bytes (or all, when fewer are buffered) one contiguous segment
    /// (`evbuffer_pullup`) and calls `body` with it. Copies when they span chains: for small heads only.
    public func withContiguousPrefix<T, E: Error>(
        _ count: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> T
    ) throws(E) -> T {
        let length = min(count, evbuffer_get_length(pointer))
        guard length > 0, let start = evbuffer_pullup(pointer, length) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: start, count: length))
    }

    /// A copy of the first `count` bytes (or all, when fewer are buffered); the buffer keeps them.
    public func copyOut(_ count: Int) -> [UInt8] {
        let length = min(count, evbuffer_get_length(pointer))
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        let copied = bytes.withUnsafeMutableBytes { raw in evbuffer_copyout(pointer, raw.baseAddress, length) }
        // evbuffer_copyout fails only for a position past the end, which `length` rules out.
        return copied == length ? bytes : Array(bytes[..<max(0, copied)])
    }

    /// Reads up to `upTo` bytes from `fd` straight into the buffer's end (`evbuffer_reserve_space`, `read`,
    /// `evbuffer_commit_space`: no copy). Returns how many arrived; 0 at end of file. `EINTR` is retried;
    /// any other error, `EAGAIN` included, is thrown.
    public func read(from fd: Int32, upTo limit: Int) throws(IOError) -> Int {
        guard limit > 0 else { return 0 }
        var vector = iovec()
        guard evbuffer_reserve_space(pointer, limit, &vector, 1) >= 1 else {
            throw .outOfMemory("evbuffer_reserve_space")
        }
        var got: Int
        repeat {
            got = Glibc.read(fd, vector.iov_base, min(limit, vector.iov_len))
        } while got < 0 && errno == EINTR
        guard got >= 0 else { throw .lastSystemError("read") }
        guard got > 0 else { return 0 }
        vector.iov_len = got
        guard evbuffer_commit_space(pointer, &vector, 1) == 0 else { throw .eventLoop("evbuffer_commit_space failed") }
        return got
    }

    /// Appends `length` bytes of the file open as `descriptor`, from `offset`, without reading them
    /// (`evbuffer_add_file_segment`: a buffer flagged `EVBUFFER_FLAG_DRAINS_TO_FD` keeps a `sendfile` chain, others
    /// map the file). Takes the descriptor in every case: closed once the bytes are sent or dropped, or here when
    /// the append fails. Renaming or unlinking the file meanwhile changes nothing: the bytes are the descriptor's.
    /// A stream's output takes files through `SocketStream.appendFile`, which sends them with `evbuffer_write`.
    package func appendFile(descriptor: Int32, offset: Int, length: Int) throws(IOError) {
        guard
            let segment = evbuffer_file_segment_new(
                descriptor, Int64(offset), Int64(length), UInt32(EVBUF_FS_CLOSE_ON_FREE))
        else {
            Glibc.close(descriptor)
            throw .outOfMemory("evbuffer_file_segment_new")
        }
        // The buffer holds its own reference; ours goes now (the last one closes the descriptor).
        defer { evbuffer_file_segment_free(segment) }
        guard evbuffer_add_file_segment(pointer, segment, 0, Int64(length)) == 0 else {
            throw .outOfMemory("evbuffer_add_file_segment")
        }
    }

    /// Writes from the buffer's start to `fd` and drains what was written (`evbuffer_write`). Returns how many
    /// bytes went; 0 when `fd` would block. `EINTR` is retried; any other error is thrown.
    public func write(to fd: Int32) throws(IOError) -> Int {
        guard evbuffer_get_length(pointer) > 0 else { return 0 }
        while true {
            let written = evbuffer_write(pointer, fd)
            if written >= 0 { return Int(written) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return 0 }
            throw .system(call: "evbuffer_write", errno: code)
        }
    }
}

/// An `evbuffer` of its own (`evbuffer_new`), freed when this goes: staging and spool buffers.
public final class OwnedIOBuffer {
    public let buffer: IOBuffer

    public init() throws(IOError) {
        guard let pointer = evbuffer_new() else { throw .outOfMemory("evbuffer_new") }
        buffer = IOBuffer(pointer)
    }

    deinit {
        evbuffer_free(buffer.pointer)
    }
}
