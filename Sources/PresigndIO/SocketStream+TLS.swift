internal import CLibevent
internal import COpenSSL
import PresigndOpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// TLS client connections: OpenSSL driven directly on the stream's socket (a socket BIO), with the stream's own
/// read and write events, buffers, read block and deadlines.
///
/// Why not libevent's OpenSSL bufferevent (which presignd used before): it reads into a fresh 4 KiB reservation,
/// an 8 KiB chain that glibc serves from its slow path and frees as soon as the answer is moved on, once per
/// response and about once per 4 KiB of a body; it writes only on the next loop iteration (an `epoll_ctl` pair and
/// a wake-up per request); and it cannot use OpenSSL's read-ahead, since it does not look for plaintext OpenSSL
/// holds. Here a small answer lands in the loop's `ReadBlock`, a request leaves inside `flush()` as on a plain
/// socket, and read-ahead takes a record (or several) with one `read` instead of two.
///
/// The handshake starts at once; `onHandshake` hears how it went (whether the session was resumed, or why it
/// failed), and the owner hears nothing before it succeeds. Output appended meanwhile leaves after it. A peer that
/// closes without close_notify ends the stream as `.endOfFile` (`SSL_OP_IGNORE_UNEXPECTED_EOF`: many servers do
/// that; framing tells complete bodies from cut ones).
///
/// OpenSSL writes to the socket with `write(2)`, not `send(MSG_NOSIGNAL)`: the process must ignore `SIGPIPE`
/// (presignd does, DESIGN §5), or a write to a reset peer kills it.
extension SocketStream {
    /// Where a stream's TLS connection is.
    enum TLSPhase {
        /// No TLS: a plain socket.
        case plain
        /// The handshake runs; its end goes to the closure (not to the owner).
        case handshaking((Result<Bool, StreamEnd>) -> Void)
        /// Application data flows.
        case established
        /// The handshake failed (reported); the owner closes the stream.
        case failed

        /// Reads and writes of application data may happen.
        var carriesData: Bool {
            switch self {
            case .plain, .established: true
            case .handshaking, .failed: false
            }
        }
    }

    /// An OpenSSL call that waits for the other direction's readiness.
    enum TLSWait: Equatable {
        case none
        /// `SSL_write` needs the socket readable first: the write event is off until it is.
        case writeNeedsReadable
        /// `SSL_read` needs the socket writable first.
        case readNeedsWritable
    }

    /// `SSL_OP_IGNORE_UNEXPECTED_EOF` (OpenSSL 3's `SSL_OP_BIT(7)`, a macro Swift does not import).
    static let ignoreUnexpectedEOF: UInt64 = 1 << 7

    /// A TLS client stream over `connectedFD` (connected, non-blocking) with `ssl` (a client `SSL` with its SNI,
    /// verification and session set): both are freed when the stream goes, and when `init` throws.
    /// - Parameters:
    ///   - maxRead: the most one read event takes in (the read size adapts up to it).
    ///   - maxWrite: the most one `SSL_write` offers; `maxRead` when nil.
    public convenience init(
        loop: EventLoop, connectedFD: Int32, ssl: OpaquePointer, maxRead: Int, maxWrite: Int? = nil,
        onHandshake: @escaping (Result<Bool, StreamEnd>) -> Void
    ) throws(IOError) {
        try self.init(loop: loop, fd: connectedFD, ssl: ssl, maxRead: maxRead, maxWrite: maxWrite ?? maxRead)
        // A FIN without close_notify is an end of file, not an error: OpenSSL 3 reports it as "unexpected eof
        // while reading" unless told to ignore it.
        _ = SSL_set_options(ssl, Self.ignoreUnexpectedEOF)
        // Partial writes and a moved buffer on retry: output is written from wherever its bytes are now.
        _ = presignd_SSL_set_mode(
            ssl, Int(SSL_MODE_ENABLE_PARTIAL_WRITE) | Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        // Read-ahead: one `read` takes a record's header and body (and what follows); plaintext OpenSSL holds is
        // read before the stream waits for the socket again (`SSL_has_pending`).
        SSL_set_read_ahead(ssl, 1)
        guard SSL_set_fd(ssl, connectedFD) == 1 else {
            throw .tls(OpenSSLError.drain("SSL_set_fd").description)
        }
        SSL_set_connect_state(ssl)
        tlsPhase = .handshaking(onHandshake)
        // The first step on the first write event (the socket is connected, so at once): the owner never hears
        // from the stream inside its own call.
        try LibeventEvent.add(writeEvent, milliseconds: nil)
    }

    // MARK: Handshake

    /// One step of the handshake, from `init` and from each read or write event until it ends.
    private func continueHandshake(_ ssl: OpaquePointer) {
        OpenSSLError.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            completeHandshake(ssl)
            return
        }
        let code = errno
        do throws(IOError) {
            switch Self.step(ssl, result: result, errno: code) {
            // One event at a time: the other one, level-triggered, would call again and again for nothing.
            case .wantRead:
                try LibeventEvent.add(readEvent, milliseconds: nil)
                LibeventEvent.remove(writeEvent)
            case .wantWrite:
                try LibeventEvent.add(writeEvent, milliseconds: nil)
                LibeventEvent.remove(readEvent)
            case .ended(let end):
                let verify = SSL_get_verify_result(ssl)
                guard verify == X509_V_OK else {
                    let reason = String(cString: X509_verify_cert_error_string(verify))
                    report(.failed("certificate verification failed: " + reason))
                    return
                }
                report(end)
            }
        } catch {
            failSoon(.failed(error.description))
        }
    }

    private func completeHandshake(_ ssl: OpaquePointer) {
        guard case .handshaking(let done) = tlsPhase else { return }
        tlsPhase = .established
        // The handshake's events are the stream's again: reading as the owner asked, writing while output waits
        // (nothing was written during the handshake, so the write event is not armed).
        LibeventEvent.remove(writeEvent)
        if reading { arm(readEvent) } else { LibeventEvent.remove(readEvent) }
        done(.success(SSL_session_reused(ssl) == 1))
        guard !closed else { return }
        flush()
        resumeTLSReadIfBuffered()
    }

    // MARK: Events

    /// A read (`readable`) or write event, seen first by TLS: the handshake's, or the one an OpenSSL call of the
    /// other direction waits for. True when it is for the direction's own data.
    func tlsEventIsForData(_ ssl: OpaquePointer, readable: Bool) -> Bool {
        switch tlsPhase {
        case .handshaking:
            continueHandshake(ssl)
            return false
        case .failed:
            return false
        case .plain, .established:
            break
        }
        switch (tlsWait, readable) {
        case (.writeNeedsReadable, true):
            tlsWait = .none
            if !reading { LibeventEvent.remove(readEvent) }
            if isWriteArmed { arm(writeEvent) }
        case (.readNeedsWritable, false):
            tlsWait = .none
            if !isWriteArmed { LibeventEvent.remove(writeEvent) }
            if reading {
                arm(readEvent)
                event_active(readEvent, Int32(EV_READ), 0)
            }
        default:
            break
        }
        return true
    }

    /// Adds the stream's read or write event again; a failure is reported on the next loop iteration.
    func arm(_ event: OpaquePointer) {
        do {
            try LibeventEvent.add(event, milliseconds: nil)
        } catch {
            failSoon(.failed(error.description))
        }
    }

    /// Reads on the next loop iteration when OpenSSL holds plaintext (or a record) or saw an end the owner has not
    /// heard yet: the socket will not become readable for them.
    func resumeTLSReadIfBuffered() {
        guard reading, let ssl, case .established = tlsPhase else { return }
        if deferredReadEnd != nil || SSL_has_pending(ssl) == 1 {
            event_active(readEvent, Int32(EV_READ), 0)
        }
    }

    // MARK: Ending

    /// A clean TLS shutdown first (when the handshake completed and nothing failed) so the session stays
    /// resumable (DESIGN §7); we do not wait for the peer's close_notify. Then the connection is freed.
    func releaseTLS(_ ssl: OpaquePointer) {
        if case .established = tlsPhase, !hasFailed {
            SSL_set_shutdown(ssl, SSL_RECEIVED_SHUTDOWN)
            _ = SSL_shutdown(ssl)  // a peer already gone makes this fail: no error
        }
        OpenSSLError.clear()
        SSL_free(ssl)
    }

    /// Tells the owner how the stream ended, or, during a TLS handshake, the handshake's closure.
    func report(_ end: StreamEnd) {
        switch end {
        case .reset, .failed: hasFailed = true
        case .endOfFile, .readTimeout, .writeTimeout: break
        }
        if case .handshaking(let done) = tlsPhase {
            tlsPhase = .failed
            LibeventEvent.remove(readEvent)
            LibeventEvent.remove(writeEvent)
            done(.failure(end))
            return
        }
        owner?.streamEnded(end)
    }
}
