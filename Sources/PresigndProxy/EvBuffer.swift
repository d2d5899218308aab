import CLibevent
import PresigndHTTP1

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
    /// `output` and `fd` are the bufferevent's, cached by the caller (they never change once connected).
    static func flushNow(_ bev: OpaquePointer, output: OpaquePointer, fd: Int32) -> FlushOutcome {
        if evbuffer_get_length(output) > 0 && fd >= 0 {
            // A socket bufferevent keeps its output's start frozen except while it writes itself.
            evbuffer_unfreeze(output, 1)
            _ = evbuffer_write(output, fd)
            evbuffer_freeze(output, 1)
        }
        if evbuffer_get_length(output) == 0 {
            // Disabling an already disabled write event still costs an event_del: skip it.
            if Int32(bufferevent_get_enabled(bev)) & Int32(EV_WRITE) != 0 { bufferevent_disable(bev, Int16(EV_WRITE)) }
            return .empty
        }
        bufferevent_enable(bev, Int16(EV_WRITE))
        return .pending
    }
}
