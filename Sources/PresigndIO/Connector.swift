internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// Why a `Connector` could not connect.
public enum ConnectFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// Name resolution failed (`evutil_gai_strerror` text).
    case dns(String)
    /// Every address refused or failed (the last one's `errno` text).
    case connect(String)
    /// The deadline passed while resolving or connecting.
    case timeout

    public var description: String {
        switch self {
        case .dns(let reason): "cannot resolve: \(reason)"
        case .connect(let reason): "cannot connect: \(reason)"
        case .timeout: "timed out resolving or connecting"
        }
    }
}

/// Name resolution (evdns through the loop's `evdns_base`; numeric hosts and /etc/hosts answer at once) and a
/// non-blocking TCP connect to each address in turn, under one deadline covering both. Calls back exactly once,
/// always from the loop (never inside `init`), with the connected socket (non-blocking, `TCP_NODELAY`, owned by
/// the caller from then on) or why it failed. `cancel()`, or letting the connector go, ends the attempt with no
/// callback and closes the socket.
public final class Connector {
    private let loop: EventLoop
    private let port: Int
    private var completion: ((Result<Int32, ConnectFailure>) -> Void)?
    /// The deadline, and the wake-up for results found outside a loop callback (`event_active`).
    private let timer: OpaquePointer
    /// Writable once the current address's connect finishes.
    private var connectEvent: OpaquePointer?
    private var lookup: DNSLookup?
    private var addresses: [SocketAddressBytes] = []
    private var nextAddress = 0
    private var fd: Int32 = -1
    private var lastError: Int32 = 0
    /// The outcome, delivered by the timer's next callback.
    private var result: Result<Int32, ConnectFailure>?

    public init(
        loop: EventLoop, host: String, port: Int, timeoutMilliseconds: Int,
        completion: @escaping (Result<Int32, ConnectFailure>) -> Void
    ) throws(IOError) {
        self.loop = loop
        self.port = port
        self.completion = completion
        timer = try LibeventEvent.new(loop, flags: 0) { _, _, context in
            LibeventEvent.owner(context, as: Connector.self)?.timerFired()
        }
        try LibeventEvent.setOwner(timer, self)
        try LibeventEvent.add(timer, milliseconds: max(1, timeoutMilliseconds))
        let dns = try loop.dns()
        let lookup = DNSLookup(connector: self)
        self.lookup = lookup
        try lookup.start(dns: dns, host: host, port: port)
    }

    deinit {
        cancel()
        event_free(timer)
    }

    /// No callback follows; a socket being connected is closed.
    public func cancel() {
        completion = nil
        stop()
        // A connection made but not handed over yet (it goes out on the timer's next round) is closed too.
        if case .success(let connected) = result { Glibc.close(connected) }
        result = nil
        LibeventEvent.remove(timer)
    }

    private func stop() {
        lookup?.cancel()
        lookup = nil
        if let connectEvent {
            event_free(connectEvent)
            self.connectEvent = nil
        }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Ends the attempt; the completion runs from the timer on the next loop round.
    private func finish(_ outcome: Result<Int32, ConnectFailure>) {
        guard result == nil, completion != nil else { return }
        if case .success = outcome {
            fd = -1  // the caller's now
        }
        stop()
        result = outcome
        event_active(timer, Int32(EV_TIMEOUT), 0)
    }

    private func timerFired() {
        guard let completion else { return }
        guard let outcome = result else {
            // The deadline.
            stop()
            self.completion = nil
            completion(.failure(.timeout))
            return
        }
        self.completion = nil
        result = nil  // handed over: the socket is the caller's
        completion(outcome)
    }

    // MARK: Resolution

    fileprivate func resolved(_ outcome: Result<[SocketAddressBytes], ConnectFailure>) {
        lookup = nil
        switch outcome {
        case .failure(let failure):
            finish(.failure(failure))
        case .success(let found):
            addresses = found
            nextAddress = 0
            connectNext()
        }
    }

    // MARK: Connecting

    private func connectNext() {
        while nextAddress < addresses.count {
            let address = addresses[nextAddress]
            nextAddress += 1
            switch startConnect(address) {
            case .connected:
                connected()
                return
            case .inProgress:
                return
            case .failed(let code):
                lastError = code
            }
        }
        finish(.failure(.connect(lastError == 0 ? "no address" : IOError.text(errno: lastError))))
    }

    private enum ConnectStart {
        case connected, inProgress
        case failed(Int32)
    }

    private func startConnect(_ address: SocketAddressBytes) -> ConnectStart {
        let socketFD = socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            Int32(IPPROTO_TCP))
        guard socketFD >= 0 else { return .failed(errno) }
        fd = socketFD
        let status = address.bytes.withUnsafeBytes { raw in
            Glibc.connect(socketFD, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if status == 0 { return .connected }
        let code = errno
        guard code == EINPROGRESS || code == EINTR else {
            closeCurrent()
            return .failed(code)
        }
        do {
            let event = try LibeventEvent.new(loop, fd: socketFD, flags: EV_WRITE) { _, _, context in
                LibeventEvent.owner(context, as: Connector.self)?.connectFinished()
            }
            connectEvent = event
            try LibeventEvent.setOwner(event, self)
            try LibeventEvent.add(event, milliseconds: nil)
        } catch {
            closeCurrent()
            return .failed(ENOMEM)
        }
        return .inProgress
    }

    private func closeCurrent() {
        if let connectEvent {
            event_free(connectEvent)
            self.connectEvent = nil
        }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    private func connectFinished() {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        if code == 0 {
            if let connectEvent {
                event_free(connectEvent)
                self.connectEvent = nil
            }
            connected()
        } else {
            lastError = code
            closeCurrent()
            connectNext()
        }
    }

    private func connected() {
        var one: Int32 = 1
        // Small heads go out at once (no Nagle wait); a socket that refuses the option still works.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        finish(.success(fd))
    }
}

/// One resolved address as `connect` takes it.
struct SocketAddressBytes {
    var family: Int32
    var bytes: [UInt8]
}

/// One `evdns_getaddrinfo` request. Its callback runs exactly once (with `EVUTIL_EAI_CANCEL` after `cancel`), and
/// may run inside `start`; the request keeps the lookup alive until then, and the lookup holds its connector
/// weakly, so a connector that goes while its lookup runs is never called.
final class DNSLookup {
    weak var connector: Connector?
    private var request: OpaquePointer?
    private var isDone = false

    init(connector: Connector) {
        self.connector = connector
    }

    func start(dns: OpaquePointer, host: String, port: Int) throws(IOError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = EVUTIL_AI_NUMERICSERV
        let context = Unmanaged.passRetained(self).toOpaque()
        request = evdns_getaddrinfo(dns, host, String(port), &hints, dnsLookupDone, context)
        // NULL: answered already (inside the call) or failed to start, which also reports through the callback.
    }

    func cancel() {
        connector = nil
        if let request, !isDone {
            evdns_getaddrinfo_cancel(request)
        }
        request = nil
    }

    fileprivate func done(_ code: Int32, _ list: UnsafeMutablePointer<addrinfo>?) {
        isDone = true
        request = nil
        defer { if let list { evutil_freeaddrinfo(list) } }
        guard let connector else { return }
        guard code == 0 else {
            connector.resolved(.failure(.dns(String(cString: evutil_gai_strerror(code)))))
            return
        }
        var found: [SocketAddressBytes] = []
        var entry = list
        while let info = entry {
            if let address = info.pointee.ai_addr, info.pointee.ai_addrlen > 0 {
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen)))
                found.append(SocketAddressBytes(family: info.pointee.ai_family, bytes: bytes))
            }
            entry = info.pointee.ai_next
        }
        connector.resolved(found.isEmpty ? .failure(.dns("no address")) : .success(found))
    }
}

private func dnsLookupDone(_ code: Int32, _ list: UnsafeMutablePointer<addrinfo>?, _ context: UnsafeMutableRawPointer?)
{
    guard let context else { return }
    Unmanaged<DNSLookup>.fromOpaque(context).takeRetainedValue().done(code, list)
}
