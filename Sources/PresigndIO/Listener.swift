internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// Accepts connections on a bound, listening socket (`evconnlistener`), TCP or unix.
///
/// When `accept` fails for a reason that does not go away by itself (EMFILE, ENFILE, ENOBUFS, ENOMEM: no
/// descriptor or no memory), the listening socket stays readable and an unguarded loop retries at once, at 100%
/// CPU (issue 20). Here accepting pauses instead for a back-off (`initialBackoffMilliseconds`, doubling to
/// `maxBackoffMilliseconds` while errors go on), `onError` hears of each failed accept (one per pause: the owner
/// rate-limits its log), `onResume` of each end of a pause, and a successful accept ends the episode. The owner ends
/// a pause early with `retryNow()` when it frees a descriptor.
public final class Listener {
    /// The address as bound (`ListenSocket.boundAddress`).
    public let boundAddress: String
    private let listener: OpaquePointer
    /// Ends a back-off.
    private let retryTimer: OpaquePointer
    private let onAccept: (Int32, SocketAddress) -> Void
    private let onError: (Int32) -> Void
    private let loop: EventLoop
    /// What the owner asked for (`enable`/`disable`); a back-off pauses accepting without changing it.
    public private(set) var isEnabled = true
    /// Accepting pauses after errors.
    public private(set) var isBackingOff = false
    /// Pauses so far (each one a failed `accept` that would otherwise have been retried at once): for metrics.
    public private(set) var pauseCount = 0
    /// Told when a pause ends (the timer ran out, or `retryNow`).
    public var onResume: (() -> Void)?
    /// Gets connections accepted with the spare descriptor when the process has none left (EMFILE, ENFILE), to
    /// answer and close at once (`Listener+Overflow.swift`); nil leaves them in the backlog.
    public var onOverflow: ((Int32) -> Void)?
    /// A descriptor held back (`/dev/null`) so that a connection can be accepted and answered at the limit.
    var spareDescriptor: Int32 = -1
    /// Connections accepted so far.
    public private(set) var acceptedCount = 0
    /// The next pause; 0 outside an error episode.
    private var backoffMilliseconds = 0
    /// The first pause of an episode, and the longest.
    public let initialBackoffMilliseconds: Int
    public let maxBackoffMilliseconds: Int

    /// Takes `socket`'s descriptor: closed when the listener goes, and when `init` throws. Accepted sockets are
    /// non-blocking and close-on-exec; `onAccept` owns them.
    public init(
        loop: EventLoop, socket: ListenSocket, initialBackoffMilliseconds: Int = 100,
        maxBackoffMilliseconds: Int = 1000, onAccept: @escaping (Int32, SocketAddress) -> Void,
        onError: @escaping (Int32) -> Void
    ) throws(IOError) {
        self.loop = loop
        self.boundAddress = socket.boundAddress
        self.onAccept = onAccept
        self.onError = onError
        self.initialBackoffMilliseconds = max(1, initialBackoffMilliseconds)
        self.maxBackoffMilliseconds = max(self.initialBackoffMilliseconds, maxBackoffMilliseconds)
        let retry: OpaquePointer
        do {
            retry = try LibeventEvent.new(loop, flags: 0) { _, _, context in
                LibeventEvent.owner(context, as: Listener.self)?.resume()
            }
        } catch {
            Glibc.close(socket.fd)
            throw error
        }
        let flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC
        guard let listener = evconnlistener_new(loop.base, listenerAccepted, nil, UInt32(flags), -1, socket.fd) else {
            event_free(retry)
            Glibc.close(socket.fd)
            throw .outOfMemory("evconnlistener_new")
        }
        self.listener = listener
        self.retryTimer = retry
        // From here on `deinit` frees both if a call throws.
        try LibeventEvent.setOwner(retry, self)
        // The context can only be `self` once every property is set; no connection is accepted before the loop
        // runs, so setting it now misses none.
        evconnlistener_set_cb(listener, listenerAccepted, Unmanaged.passUnretained(self).toOpaque())
        evconnlistener_set_error_cb(listener, listenerFailed)
        spareDescriptor = Self.openSpare()
    }

    /// The listening socket (to accept with the spare descriptor).
    var listeningDescriptor: Int32 { evconnlistener_get_fd(listener) }

    deinit {
        evconnlistener_free(listener)
        event_free(retryTimer)
        if spareDescriptor >= 0 { Glibc.close(spareDescriptor) }
    }

    /// Accepts again (unless a back-off is running; then once it ends).
    public func enable() throws(IOError) {
        isEnabled = true
        guard !isBackingOff else { return }
        guard evconnlistener_enable(listener) == 0 else { throw .outOfMemory("evconnlistener_enable") }
    }

    /// Leaves new connections in the kernel's backlog until `enable()`.
    public func disable() throws(IOError) {
        isEnabled = false
        guard evconnlistener_disable(listener) == 0 else { throw .outOfMemory("evconnlistener_disable") }
    }

    /// Ends a back-off now (say, because a connection closed and freed a descriptor).
    public func retryNow() {
        guard isBackingOff else { return }
        LibeventEvent.remove(retryTimer)
        resume()
    }

    fileprivate func accepted(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: Int32) {
        backoffMilliseconds = 0  // the episode is over
        acceptedCount += 1
        let peer =
            address.map { SocketAddress(sockaddr: $0, length: length) } ?? SocketAddress(sockaddr_storage())
        onAccept(fd, peer)
    }

    fileprivate func failed(errno code: Int32) {
        let isNewEpisode = backoffMilliseconds == 0
        backoffMilliseconds =
            isNewEpisode ? initialBackoffMilliseconds : min(maxBackoffMilliseconds, backoffMilliseconds * 2)
        // The owner hears of the failure before the pause (whose end it hears of through `onResume`).
        onError(code)
        pause()
        if code == EMFILE || code == ENFILE { shedOverflow() }
    }

    private func pause() {
        isBackingOff = true
        pauseCount += 1
        // Disabling fails only when the changelist cannot grow; the retry timer still runs either way.
        _ = evconnlistener_disable(listener)
        do {
            try LibeventEvent.add(retryTimer, milliseconds: backoffMilliseconds)
        } catch {
            // Without a timer the listener would stay paused: resume now instead, and pause again on the next error.
            resume()
        }
    }

    fileprivate func resume() {
        isBackingOff = false
        defer { onResume?() }
        guard isEnabled else { return }
        // If this fails the listener stays paused until the owner enables it again.
        _ = evconnlistener_enable(listener)
    }

    /// The pause running now, in milliseconds; 0 when accepting is not paused.
    public var currentPauseMilliseconds: Int { isBackingOff ? backoffMilliseconds : 0 }
}

private func listenerAccepted(
    _: OpaquePointer?, _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: Int32,
    _ context: UnsafeMutableRawPointer?
) {
    guard let context else {
        Glibc.close(fd)
        return
    }
    Unmanaged<Listener>.fromOpaque(context).takeUnretainedValue().accepted(fd, address, length)
}

private func listenerFailed(_ listener: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    // errno first: it is accept's until anything else runs.
    let code = errno
    guard let context else { return }
    Unmanaged<Listener>.fromOpaque(context).takeUnretainedValue().failed(errno: code)
}
