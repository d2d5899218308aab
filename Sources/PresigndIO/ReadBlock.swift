internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// One block of memory per loop that a socket's small reads (plain or TLS) land in, lent to the stream's input by
/// reference (`evbuffer_add_reference`) rather than copied into a chain libevent allocates.
///
/// Why: a read reserves a chain of at least `SocketStream.minRead` (4 KiB), which libevent allocates with `malloc`
/// and frees as soon as the bytes are drained. That is two or three allocations of 4 to 8 KiB a request, above
/// what glibc's per-thread cache holds (1 KiB), so each goes through its slow path and its free through chunk
/// consolidation (about 0.5 µs a request, measured with `perf` under wrk). A reference chain is only a header,
/// though libevent rounds every chain up to 1 KiB: still a size the per-thread cache serves. The proxy drains a
/// request's head, or moves a small response on to the client, within the callback that read it, so the block is
/// free again by the next read; a read while it is still lent takes the reserved chain as before.
///
/// The loop's thread alone reads, lends and is called back: evbuffers never cross threads in presignd.
final class ReadBlock {
    let capacity: Int
    private let memory: UnsafeMutableRawPointer
    /// The block's bytes are in a buffer (its reference is not released yet).
    private(set) var isLent = false

    init(capacity: Int) {
        self.capacity = capacity
        memory = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        memory.deallocate()
    }

    /// Reads up to `count` bytes (at most `capacity`) into the block with `read` (`recv` on a socket, `SSL_read`
    /// over TLS: called with the block's memory and the count) and appends what it gave to `buffer` by reference.
    /// Returns what `read` returned (0 or less: nothing was appended; `errno` is the read's). Only while `!isLent`.
    @inline(__always)
    func fill(_ buffer: IOBuffer, count: Int, read: (UnsafeMutableRawPointer, Int) -> Int) -> Int {
        precondition(!isLent, "the read block is lent")
        let got = read(memory, min(count, capacity))
        guard got > 0 else { return got }
        // The reference holds the block (retained) until libevent lets the bytes go, whichever buffer they went to.
        let context = Unmanaged.passRetained(self).toOpaque()
        guard evbuffer_add_reference(buffer.pointer, memory, got, Self.released, context) == 0 else {
            Unmanaged<ReadBlock>.fromOpaque(context).release()
            // No memory for the chain header: copy the bytes instead; failing that too, the read fails (ENOMEM).
            guard (try? buffer.append(UnsafeRawBufferPointer(start: memory, count: got))) != nil else {
                errno = ENOMEM
                return -1
            }
            return got
        }
        isLent = true
        return got
    }

    /// libevent's cleanup for the reference: the last byte lent was drained (or its buffer freed).
    private static let released: evbuffer_ref_cleanup_cb = { _, _, context in
        guard let context else { return }
        Unmanaged<ReadBlock>.fromOpaque(context).takeRetainedValue().isLent = false
    }
}
