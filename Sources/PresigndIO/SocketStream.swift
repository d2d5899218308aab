internal import CLibevent
internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// A connected, non-blocking socket with its own read event, write event and input/output buffers: no bufferevent
/// in between, so nothing reaches past libevent's public API. Plain, or TLS with OpenSSL driven on the same
/// events, buffers and deadlines (`SocketStream+TLS.swift`).
///
/// Reads go straight into `input` (`evbuffer_reserve_space`, one `recv`, `evbuffer_commit_space`). libevent 2.1's
/// bufferevents read at most 4096 bytes a callback (`EVBUFFER_MAX_READ`), which capped uploads at ~170 MB/s
/// (DESIGN §7); here the read size adapts instead: it doubles while reads fill it (bulk bodies, up to `maxRead`)
/// and halves for small messages (to 4 KiB), so idle keep-alive connections hold no big buffers.
///
/// Writes happen in `flush()`, as nginx does, instead of on the next loop iteration: that saves an `epoll_ctl`
/// pair and a wake-up per response. Only what the socket does not take waits for the write event.
///
/// Timeouts are deadlines on one timer per stream (`SocketStream+Timeouts.swift`): a read moves the read deadline
/// on without touching the timer heap.
public final class SocketStream: ByteStream {
    public let fd: Int32
    public let input: IOBuffer
    public let output: IOBuffer
    // The public state is computed over internal storage: only this module touches the stored properties, so the
    // whole-module optimizer can check their exclusivity statically (a public stored property is checked at run
    // time on every access, about a hundred instructions each).
    public var delegate: StreamDelegate? {
        get { owner }
        set { StreamOwner.replace(&ownerSlot, with: newValue) }
    }
    public var isReading: Bool { reading }
    public var isClosed: Bool { closed }
    public var lowWatermark: Int {
        get { writeLowWatermark }
        set { writeLowWatermark = newValue }
    }
    private var ownerSlot: StreamOwner?
    var owner: StreamDelegate? { ownerSlot?.delegate }
    private(set) var reading = false
    private(set) var closed = false
    var writeLowWatermark = 0

    let loop: EventLoop
    /// The loop's `ReadBlock`, held here: a call through `loop.readBlock` retains and releases it on every read.
    let readBlock: ReadBlock
    let readEvent: OpaquePointer
    let writeEvent: OpaquePointer
    /// The one timer: deadlines and failures found outside a loop callback.
    let timerEvent: OpaquePointer
    /// The write event is added: the socket did not take everything.
    private(set) var isWriteArmed = false
    /// The output holds a file piece (`appendFile`): `evbuffer_peek` cannot show it, so writes go through
    /// `evbuffer_write` (`sendfile` for it, `writev` for the memory before it) until the output is empty.
    var sendsFiles = false
    /// The bytes in memory before the first file piece (an answer's head), still to be sent with `MSG_MORE`
    /// (`writeOutWithFiles`); 0 when none.
    var bytesBeforeFile = 0
    /// `output` was above `writeLowWatermark` since the last drained report (or flush that brought it down).
    private var wasAboveLowWatermark = false

    /// Bounds for one read; the size adapts between them (no `FIONREAD` syscall per read).
    public static let minRead = 4096
    let maxRead: Int
    var readSize = 16384

    var readTimeoutMilliseconds = 0
    var writeTimeoutMilliseconds = 0
    /// When reading times out (`MonotonicClock.coarseMilliseconds`); 0 while no read timeout runs.
    var readDeadline = 0
    /// When pending output times out; 0 while none runs.
    var writeDeadline = 0
    /// The deadline the timer is armed for; 0 while it is not armed.
    var timerExpiry = 0
    /// A failure found inside a call from the owner, reported from the timer on the next loop iteration.
    var pendingEnd: StreamEnd?

    /// The TLS connection over the socket; nil for a plain socket. Freed with the stream.
    let ssl: OpaquePointer?
    /// Where the TLS connection is (`.plain` without one).
    var tlsPhase: TLSPhase = .plain
    /// An OpenSSL call that waits for the other direction's readiness (rare: a renegotiation, a key update).
    var tlsWait: TLSWait = .none
    /// The length the next `SSL_write` must offer at least: what the last one offered when it could not finish.
    var tlsRetryLength = 0
    /// The most one `SSL_write` offers.
    let maxWrite: Int
    /// How a TLS read ended after it had delivered bytes: reported on the next read event.
    var deferredReadEnd: StreamEnd?
    /// The stream ended with a reset or a failure: no close_notify goes to a peer that is gone.
    var hasFailed = false

    /// Takes `fd` (connected, non-blocking): closed by `close()`, `reset()` or when the stream goes, and when
    /// `init` throws.
    public convenience init(loop: EventLoop, fd: Int32, maxRead: Int) throws(IOError) {
        try self.init(loop: loop, fd: fd, ssl: nil, maxRead: maxRead, maxWrite: maxRead)
    }

    /// Takes `fd` and `ssl` (when not nil): both are freed when the stream goes, and when `init` throws.
    init(loop: EventLoop, fd: Int32, ssl: OpaquePointer?, maxRead: Int, maxWrite: Int) throws(IOError) {
        self.loop = loop
        self.readBlock = loop.readBlock
        self.fd = fd
        self.ssl = ssl
        self.maxRead = max(Self.minRead, maxRead)
        self.maxWrite = max(Self.minRead, maxWrite)
        var made: [OpaquePointer] = []
        var buffers: [OpaquePointer] = []
        do throws(IOError) {
            for _ in 0..<2 {
                guard let buffer = evbuffer_new() else { throw .outOfMemory("evbuffer_new") }
                buffers.append(buffer)
            }
            made.append(
                try LibeventEvent.new(loop, fd: fd, flags: EV_READ | EV_PERSIST) { _, _, context in
                    LibeventEvent.owner(context, as: SocketStream.self)?.handleReadable()
                })
            made.append(
                try LibeventEvent.new(loop, fd: fd, flags: EV_WRITE | EV_PERSIST) { _, _, context in
                    LibeventEvent.owner(context, as: SocketStream.self)?.handleWritable()
                })
            made.append(
                try LibeventEvent.new(loop, flags: 0) { _, _, context in
                    LibeventEvent.owner(context, as: SocketStream.self)?.handleTimer()
                })
        } catch {
            for event in made { event_free(event) }
            for buffer in buffers { evbuffer_free(buffer) }
            if let ssl { SSL_free(ssl) }
            Glibc.close(fd)
            throw error
        }
        // The output only ever drains to the socket: file segments (`IOBuffer.appendFile`) go with `sendfile`.
        _ = evbuffer_set_flags(buffers[1], UInt64(EVBUFFER_FLAG_DRAINS_TO_FD))
        input = IOBuffer(buffers[0])
        output = IOBuffer(buffers[1])
        readEvent = made[0]
        writeEvent = made[1]
        timerEvent = made[2]
        // From here on `deinit` frees everything if a call throws.
        for event in made { try LibeventEvent.setOwner(event, self) }
    }

    deinit {
        if !closed { release() }
        evbuffer_free(input.pointer)
        evbuffer_free(output.pointer)
    }

    public func enableReading() {
        guard !reading, !closed else { return }
        do {
            try LibeventEvent.add(readEvent, milliseconds: nil)
        } catch {
            failSoon(.failed(error.description))
            return
        }
        reading = true
        restartReadDeadline()
        // Plaintext OpenSSL holds already (or an end it saw) makes the socket no more readable: read it now.
        if ssl != nil { resumeTLSReadIfBuffered() }
    }

    public func disableReading() {
        guard reading else { return }
        reading = false
        readDeadline = 0  // an armed timer finds no deadline and does nothing
        // A TLS write waiting for the socket to be readable keeps the read event (`tlsEventIsForData`).
        if tlsWait != .writeNeedsReadable { LibeventEvent.remove(readEvent) }
    }

    public func close() {
        guard !closed else { return }
        release()
    }

    public func reset() {
        guard !closed else { return }
        hasFailed = true  // no close_notify: the peer is to see a reset
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        // If the option cannot be set the peer sees a FIN instead: nothing else is left to try.
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        release()
    }

    /// Frees the events and closes the socket; the buffers stay until the stream goes (the owner may still read
    /// what arrived).
    private func release() {
        closed = true
        reading = false
        isWriteArmed = false
        StreamOwner.replace(&ownerSlot, with: nil)
        event_free(readEvent)
        event_free(writeEvent)
        event_free(timerEvent)
        if let ssl { releaseTLS(ssl) }
        // Linux frees the descriptor whatever close reports (EINTR included): there is nothing to retry.
        _ = Glibc.close(fd)
    }

    /// ECONNRESET and EPIPE are the peer aborting; anything else is a failure with its text.
    static func end(errno code: Int32) -> StreamEnd {
        code == ECONNRESET || code == EPIPE ? .reset : .failed(IOError.text(errno: code))
    }

    // MARK: Writing

    /// Appends `bytes` to the output. With nothing queued (no bytes, no file piece, no armed write) they are sent
    /// at once from the caller's array, on a plain socket or over an established TLS connection (`sendTLS`), and
    /// only what the socket does not take is queued, in order, for `flush` and the loop: a request head on an idle
    /// keep-alive connection is then neither copied into the output buffer nor given a buffer chain of its own (a
    /// 1 KiB allocation per request, from glibc's slow path when many exchanges are in flight). A send that fails
    /// queues everything, so the `flush` that follows meets the failure and reports it as any write's failure is
    /// reported.
    public func write(_ bytes: [UInt8]) throws(IOError) {
        var sent = 0
        if !closed, !sendsFiles, !isWriteArmed, !bytes.isEmpty, output.count == 0 {
            sent = bytes.withUnsafeBytes { raw in
                if let ssl { return sendTLS(ssl, raw) }
                while true {
                    let result = Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                    if result < 0 && errno == EINTR { continue }
                    return max(result, 0)
                }
            }
        }
        try output.append(bytes, from: sent)
    }

    public func flush() {
        guard !closed, !isWriteArmed else { return }  // an armed write event writes as soon as it can
        let pending = output.count
        guard pending > 0, tlsPhase.carriesData else { return }  // output waits for a TLS handshake
        let (remaining, failure) = writeOut(pending)
        if let failure {
            failSoon(failure)
            return
        }
        wasAboveLowWatermark = remaining > writeLowWatermark
        guard remaining > 0 else { return }
        // A TLS write that waits for the socket to be readable gets its write event back from the read event.
        if tlsWait != .writeNeedsReadable {
            do {
                try LibeventEvent.add(writeEvent, milliseconds: nil)
            } catch {
                failSoon(.failed(error.description))
                return
            }
        }
        isWriteArmed = true
        restartWriteDeadline()
    }

    private func handleWritable() {
        if let ssl, !tlsEventIsForData(ssl, readable: false) { return }
        guard isWriteArmed else { return }
        let pending = output.count
        if pending > writeLowWatermark { wasAboveLowWatermark = true }
        let (remaining, failure) = pending > 0 ? writeOut(pending) : (0, nil)
        if let failure {
            disarmWriting()
            report(failure)
            return
        }
        if remaining == 0 {
            disarmWriting()
            wasAboveLowWatermark = false
            owner?.streamDrained()
            return
        }
        if remaining < pending { restartWriteDeadline() }  // progress moves the deadline on
        if wasAboveLowWatermark && remaining <= writeLowWatermark {
            wasAboveLowWatermark = false
            owner?.streamDrained()
        }
    }

    func disarmWriting() {
        guard isWriteArmed else { return }
        isWriteArmed = false
        writeDeadline = 0
        LibeventEvent.remove(writeEvent)
    }

    /// Everything the socket takes, as `evbuffer_write` would, again while it takes all that was offered.
    /// Returns what is left and how the stream failed, if it did (a full socket is no failure).
    private func writeOut(_ pending: Int) -> (remaining: Int, failure: StreamEnd?) {
        if let ssl { return writeOutTLS(ssl, pending) }
        if sendsFiles {
            let (remaining, error) = writeOutWithFiles(pending)
            return (remaining, error == 0 ? nil : Self.end(errno: error))
        }
        var remaining = pending
        while remaining > 0 {
            let (sent, offered) = SocketWriter.send(output, fd: fd)
            if sent < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { break }
                return (remaining, Self.end(errno: code))
            }
            guard sent > 0 else { break }
            output.drain(sent)
            remaining -= sent
            if sent < offered { break }  // the socket buffer is full
        }
        return (remaining, nil)
    }
}
