internal import CLibevent
internal import COpenSSL
import PresigndOpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// Application data over TLS (`SocketStream+TLS.swift`): reads into the loop's block or reserved space until OpenSSL
/// holds nothing more, writes from the start of the output, and what each OpenSSL failure means.
extension SocketStream {
    // MARK: Reading

    /// Reads what OpenSSL gives, up to `maxRead`: the first read into the loop's block when it is free, the rest
    /// into reserved space. An end found after bytes is reported on the next read event, after those bytes.
    func readTLS(_ ssl: OpaquePointer) -> ReadOutcome {
        if let end = deferredReadEnd {
            deferredReadEnd = nil
            return ReadOutcome(end)
        }
        // OpenSSL's queue must be empty before a call whose failure `SSL_get_error` reads; a call that succeeds
        // leaves nothing in it, and the first failure ends the loop.
        OpenSSLError.clear()
        var total = 0
        while true {
            let want = readSize
            var got: Int
            if want <= readBlock.capacity && !readBlock.isLent {
                got = readBlock.fill(input, count: want) { Int(SSL_read(ssl, $0, Int32($1))) }
            } else {
                got = reserveAndRead(ssl, min(want, maxRead - total))  // within the event's budget
            }
            if got > 0 {
                total += got
                if SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN != 0 {
                    // close_notify came after the bytes: the end is reported after them, whatever the socket does.
                    deferredReadEnd = .endOfFile
                    event_active(readEvent, Int32(EV_READ), 0)
                    return .bytes(total)
                }
                if SSL_has_pending(ssl) == 1 {
                    if total < maxRead { continue }
                    event_active(readEvent, Int32(EV_READ), 0)  // the rest on the next iteration
                }
                return .bytes(total)
            }
            let code = errno
            if got == Self.reservationFailed {
                return .failed(.failed(IOError.outOfMemory("evbuffer_reserve_space").description))
            }
            switch Self.step(ssl, result: Int32(got), errno: code) {
            case .wantRead:
                return total > 0 ? .bytes(total) : .wouldBlock
            case .wantWrite:
                // No read events until the socket is writable: each would find OpenSSL waiting still.
                tlsWait = .readNeedsWritable
                LibeventEvent.remove(readEvent)
                if !isWriteArmed { arm(writeEvent) }
                return total > 0 ? .bytes(total) : .wouldBlock
            case .ended(let end):
                if case .endOfFile = end {} else { hasFailed = true }
                guard total > 0 else { return ReadOutcome(end) }
                deferredReadEnd = end
                event_active(readEvent, Int32(EV_READ), 0)
                return .bytes(total)
            }
        }
    }

    /// What `reserveAndRead` returns when no space could be reserved.
    private static let reservationFailed = Int.min

    /// `SSL_read` into space reserved at the end of `input` (one reservation of `want` bytes, one chain), again
    /// while OpenSSL holds more and the space is not full (one call gives at most a record, 16 KiB), then committed
    /// for what they gave. Returns the bytes, or the first call's result when it gave none (`errno` is its own).
    private func reserveAndRead(_ ssl: OpaquePointer, _ want: Int) -> Int {
        var vector = iovec()
        guard evbuffer_reserve_space(input.pointer, want, &vector, 1) == 1, let base = vector.iov_base else {
            return Self.reservationFailed
        }
        let space = min(vector.iov_len, want)
        var filled = 0
        repeat {
            let got = Int(SSL_read(ssl, base + filled, Int32(clamping: space - filled)))
            guard got > 0 else {
                if filled == 0 { return got }
                break  // what stopped it is met again by the next call
            }
            filled += got
        } while filled < space && SSL_has_pending(ssl) == 1
        let code = errno
        vector.iov_len = filled
        guard evbuffer_commit_space(input.pointer, &vector, 1) == 0 else { return Self.reservationFailed }
        errno = code
        return filled
    }

    // MARK: Writing

    /// `write`'s direct send over TLS: `SSL_write` from the caller's bytes while the connection carries data and
    /// no call waits (no wait on the other direction, no write to repeat), until OpenSSL stops taking them. Returns
    /// how many it took. The call that stopped is repeated by the `flush` that sends the rest from the output: it
    /// offers at least what that call offered (`tlsRetryLength`), and meets its failure, if it was one.
    func sendTLS(_ ssl: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int {
        guard case .established = tlsPhase, tlsWait == .none, tlsRetryLength == 0, let base = bytes.baseAddress
        else { return 0 }
        OpenSSLError.clear()  // as in `readTLS`
        var sent = 0
        while sent < bytes.count {
            let offered = min(bytes.count - sent, maxWrite)
            let written = Int(SSL_write(ssl, base + sent, Int32(clamping: offered)))
            guard written > 0 else {
                tlsRetryLength = offered
                break
            }
            sent += written
        }
        return sent
    }

    /// `writeOut` over TLS: `SSL_write` from the start of `output` until it is empty or OpenSSL must wait.
    func writeOutTLS(_ ssl: OpaquePointer, _ pending: Int) -> (remaining: Int, failure: StreamEnd?) {
        var remaining = pending
        OpenSSLError.clear()  // as in `readTLS`
        while remaining > 0 {
            let (written, offered) = SocketWriter.write(
                output, ssl: ssl, atLeast: tlsRetryLength, atMost: maxWrite)
            if written > 0 {
                tlsRetryLength = 0
                output.drain(written)
                remaining -= written
                continue
            }
            let code = errno
            // A retry must offer at least what this call offered (OpenSSL holds it encrypted already).
            tlsRetryLength = max(tlsRetryLength, offered)
            switch Self.step(ssl, result: Int32(written), errno: code) {
            case .wantWrite:
                return (remaining, nil)
            case .wantRead:
                tlsWait = .writeNeedsReadable
                // No write events until the socket is readable (they would find OpenSSL waiting still).
                if isWriteArmed { LibeventEvent.remove(writeEvent) }
                do {
                    try LibeventEvent.add(readEvent, milliseconds: nil)
                } catch {
                    return (remaining, .failed(error.description))
                }
                // Records the write read ahead are in OpenSSL, not in the socket: no read event would come.
                if SSL_has_pending(ssl) == 1 { event_active(readEvent, Int32(EV_READ), 0) }
                return (remaining, nil)
            case .ended(let end):
                hasFailed = true
                return (remaining, end == .endOfFile ? .reset : end)
            }
        }
        return (0, nil)
    }

    /// What an OpenSSL call that returned `result` (0 or less) needs next, or how the connection ended.
    enum TLSStep {
        case wantRead
        case wantWrite
        case ended(StreamEnd)
    }

    /// `SSL_get_error` read for the stream, with the call's `errno`. OpenSSL's queue is drained into a failure.
    static func step(_ ssl: OpaquePointer, result: Int32, errno code: Int32) -> TLSStep {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            return .wantRead
        case SSL_ERROR_WANT_WRITE:
            return .wantWrite
        case SSL_ERROR_ZERO_RETURN:
            return .ended(.endOfFile)
        case SSL_ERROR_SYSCALL:
            let reasons = OpenSSLError.drain("TLS").reasons
            if code == ECONNRESET || code == EPIPE { return .ended(.reset) }
            if !reasons.isEmpty { return .ended(.failed(reasons.joined(separator: "; "))) }
            // The socket ended with no error of its own: an end of file without close_notify.
            if code == 0 { return .ended(.endOfFile) }
            return .ended(.failed(IOError.text(errno: code)))
        default:
            let reasons = OpenSSLError.drain("TLS").reasons
            return .ended(.failed(reasons.isEmpty ? "TLS connection failed" : reasons.joined(separator: "; ")))
        }
    }
}
