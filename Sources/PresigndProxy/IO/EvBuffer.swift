import CLibevent
import PresigndHTTP1

#if canImport(Glibc)
    import Glibc
#endif

/// Small helpers over libevent `evbuffer`s, the only place that peeks into them.
enum EvBuffer {
    /// Calls `body` with the first contiguous segment and the total number of buffered bytes.
    static func withFirstSegment<T, E: Error>(
        _ buffer: OpaquePointer, _ body: (UnsafeRawBufferPointer, Int) throws(E) -> T
    ) throws(E) -> T {
        let available = evbuffer_get_length(buffer)
        var vector = iovec()
        guard available > 0, evbuffer_peek(buffer, -1, nil, &vector, 1) > 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0), 0)
        }
        return try body(UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len), available)
    }

    static func add(_ buffer: OpaquePointer, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            _ = evbuffer_add(buffer, raw.baseAddress, raw.count)
        }
    }

    static func add(_ buffer: OpaquePointer, _ text: StaticString) {
        _ = evbuffer_add(buffer, text.utf8Start, text.utf8CodeUnitCount)
    }

    /// Moves `count` bytes from `source` to `destination` (whole chains move without copying).
    static func move(from source: OpaquePointer, to destination: OpaquePointer, count: Int) {
        _ = evbuffer_remove_buffer(source, destination, count)
    }

    static func drain(_ buffer: OpaquePointer, _ count: Int) {
        if count > 0 { evbuffer_drain(buffer, count) }
    }

    static func length(_ buffer: OpaquePointer) -> Int {
        evbuffer_get_length(buffer)
    }

    /// Appends `hex(size)\r\n` (RFC 9112 §7.1), written by the codec's encoder.
    static func addChunkHeader(_ buffer: OpaquePointer, size: Int) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(18)
        HTTPEncoder.chunkHeader(size: size, into: &bytes)
        add(buffer, bytes)
    }
}

/// What a direct write left behind.
enum FlushOutcome {
    case empty
    case pending
}

extension EvBuffer {
    /// Writes a plain-socket bufferevent's output now, as nginx does, instead of arming the write
    /// event and writing on the next loop iteration: saves an `epoll_ctl` pair and a wake-up per
    /// response. The bufferevent's own write event is enabled only while bytes remain (then its
    /// write callback and timeout work as usual); on an error it is enabled too, so the
    /// bufferevent reports the error through its event callback.
    /// `output` and `fd` are the bufferevent's, cached by the caller (they never change once connected);
    /// `writeEnabled` is the caller's record of whether it left the write event enabled (asking libevent
    /// takes the bufferevent's lock; a stale `true` after libevent disabled it itself costs one no-op disable).
    static func flushNow(
        _ bev: OpaquePointer, output: OpaquePointer, fd: Int32, writeEnabled: inout Bool
    ) -> FlushOutcome {
        let pending = evbuffer_get_length(output)
        var remaining = pending
        if pending > 0 && fd >= 0 {
            // A socket bufferevent keeps its output's start frozen except while it writes itself.
            evbuffer_unfreeze(output, 1)
            // Everything the socket takes, as evbuffer_write did: again while it took all that was offered.
            while remaining > 0 {
                let (sent, offered) = send(output, fd: fd)
                guard sent > 0 else { break }
                evbuffer_drain(output, sent)
                remaining -= sent
                if sent < offered { break }  // the socket buffer is full
            }
            evbuffer_freeze(output, 1)
        }
        if remaining == 0 {
            // Disabling an already disabled write event still costs an event_del: skip it.
            if writeEnabled {
                bufferevent_disable(bev, Int16(EV_WRITE))
                writeEnabled = false
            }
            return .empty
        }
        bufferevent_enable(bev, Int16(EV_WRITE))
        writeEnabled = true
        return .pending
    }

    /// Up to this many pending bytes in several pieces are copied into one per-thread buffer and sent with
    /// `send`: a small response's head and body (two chains) cost one copy of ~1 KiB, cheaper than
    /// the iovec import of `sendmsg`/`writev`.
    static let coalesceLimit = Int(PRESIGND_SEND_SCRATCH_BYTES)
    /// Pieces one `sendmsg` takes at most (libevent's writev takes 128; a bulk body's pieces are 16-512 KiB).
    static let maxWriteVectors = 64

    /// Sends from the start of `buffer` without draining it: `send` for one piece, one copied piece for
    /// a few small ones, `sendmsg` otherwise (not `writev`, which goes through the VFS layer). Returns
    /// what the socket took, or -1 (`errno` set; EAGAIN when it took nothing), and how much was offered.
    private static func send(_ buffer: OpaquePointer, fd: Int32) -> (sent: Int, offered: Int) {
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: maxWriteVectors) { vectors in
            let base = vectors.baseAddress!
            // evbuffer_peek answers how many vectors the whole buffer needs, which may be more than it filled.
            let count = min(Int(evbuffer_peek(buffer, -1, nil, base, Int32(maxWriteVectors))), maxWriteVectors)
            guard count > 0 else { return (0, 0) }
            if count == 1 {
                return (Glibc.send(fd, base[0].iov_base, base[0].iov_len, Int32(MSG_NOSIGNAL)), base[0].iov_len)
            }
            var offered = 0
            for index in 0..<count { offered += base[index].iov_len }
            if offered <= coalesceLimit {
                let scratch = UnsafeMutableRawPointer(presignd_send_scratch()!)
                var filled = 0
                for index in 0..<count {
                    (scratch + filled).copyMemory(from: base[index].iov_base!, byteCount: base[index].iov_len)
                    filled += base[index].iov_len
                }
                return (Glibc.send(fd, scratch, filled, Int32(MSG_NOSIGNAL)), filled)
            }
            var message = msghdr()
            message.msg_iov = base
            message.msg_iovlen = count
            return (sendmsg(fd, &message, Int32(MSG_NOSIGNAL)), offered)
        }
    }
}
