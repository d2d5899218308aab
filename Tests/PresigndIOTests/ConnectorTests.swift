import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized)
struct ConnectorTests {
    /// Connects and runs the loop until the completion ran (or `milliseconds` passed).
    private func connect(
        _ loop: EventLoop, host: String, port: Int, timeout: Int = 2000, milliseconds: Int = 8000
    ) throws -> Result<Int32, ConnectFailure>? {
        var outcome: Result<Int32, ConnectFailure>?
        let connector = try Connector(loop: loop, host: host, port: port, timeoutMilliseconds: timeout) {
            outcome = $0
        }
        // Never before init returns, even for answers found inside it (numeric hosts, /etc/hosts).
        #expect(outcome == nil)
        try runLoop(loop, milliseconds: milliseconds) { outcome != nil }
        withExtendedLifetime(connector) {}
        return outcome
    }

    private static func port(of socket: ListenSocket) -> Int {
        Int(socket.boundAddress.split(separator: ":").last ?? "") ?? 0
    }

    @Test func connectsToAListeningLoopbackSocket() throws {
        let loop = try EventLoop(lockless: true)
        let listening = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        defer { close(listening.fd) }
        for host in ["127.0.0.1", "localhost"] {
            let outcome = try connect(loop, host: host, port: Self.port(of: listening))
            guard case .success(let fd) = try #require(outcome) else {
                Issue.record("\(host): \(String(describing: outcome))")
                continue
            }
            var one: Int32 = 0
            var length = socklen_t(4)
            #expect(getsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, &length) == 0 && one != 0)
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
            let accepted = accept(listening.fd, nil, nil)
            #expect(accepted >= 0)
            close(accepted)
            close(fd)
        }
    }

    /// The connected socket belongs to the completion: neither cancelling nor dropping the connector afterwards
    /// closes it (a second close would hit whatever socket reused its number).
    @Test func aHandedOverSocketOutlivesTheConnector() throws {
        let loop = try EventLoop(lockless: true)
        let listening = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        defer { close(listening.fd) }
        var outcome: Result<Int32, ConnectFailure>?
        var connector: Connector? = try Connector(
            loop: loop, host: "127.0.0.1", port: Self.port(of: listening), timeoutMilliseconds: 2000
        ) { outcome = $0 }
        try runLoop(loop, milliseconds: 8000) { outcome != nil }
        guard case .success(let fd) = try #require(outcome) else {
            Issue.record("\(String(describing: outcome))")
            return
        }
        connector?.cancel()
        connector = nil
        #expect(fcntl(fd, F_GETFD) != -1, "the connector closed a socket it had handed over")
        close(fd)
    }

    @Test func aClosedPortIsAConnectFailure() throws {
        let loop = try EventLoop(lockless: true)
        let listening = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        let port = Self.port(of: listening)
        close(listening.fd)  // nothing listens there now
        let outcome = try connect(loop, host: "127.0.0.1", port: port)
        #expect(outcome == .failure(.connect(IOError.text(errno: ECONNREFUSED))))
    }

    @Test func anUnresolvableNameIsADNSFailure() throws {
        let loop = try EventLoop(lockless: true)
        let server = try FakeNameserver()
        defer { server.stop() }
        try loop.useNameservers(["127.0.0.1:\(server.port)"])
        let outcome = try connect(loop, host: "nonexistent.invalid", port: 80)
        guard case .failure(.dns(let reason)) = try #require(outcome) else {
            Issue.record("expected a DNS failure, got \(String(describing: outcome))")
            return
        }
        #expect(!reason.isEmpty)
        #expect(server.queries > 0)
    }

    @Test func aDeadlineCoversResolution() throws {
        // A nameserver that never answers: the connector's deadline ends the attempt.
        let loop = try EventLoop(lockless: true)
        let silent = try FakeNameserver(answers: false)
        defer { silent.stop() }
        try loop.useNameservers(["127.0.0.1:\(silent.port)"])
        let outcome = try connect(loop, host: "slow.invalid", port: 80, timeout: 150)
        #expect(outcome == .failure(.timeout))
    }

    @Test func cancelMeansNoCallbackAndNoSocket() throws {
        let loop = try EventLoop(lockless: true)
        let listening = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        defer { close(listening.fd) }
        var called = false
        let connector = try Connector(
            loop: loop, host: "127.0.0.1", port: Self.port(of: listening), timeoutMilliseconds: 100
        ) { _ in called = true }
        connector.cancel()
        try runLoop(loop, for: 200)
        #expect(!called)
        // Letting a connector go cancels it too.
        var dropped: Connector? = try Connector(
            loop: loop, host: "127.0.0.1", port: Self.port(of: listening), timeoutMilliseconds: 100
        ) { _ in called = true }
        withExtendedLifetime(dropped) {}
        dropped = nil
        try runLoop(loop, for: 200)
        #expect(!called)
    }

    @Test func cancellingAPendingLookupIsQuiet() throws {
        let loop = try EventLoop(lockless: true)
        let silent = try FakeNameserver(answers: false)
        defer { silent.stop() }
        try loop.useNameservers(["127.0.0.1:\(silent.port)"])
        var called = false
        var connector: Connector? = try Connector(
            loop: loop, host: "pending.invalid", port: 80, timeoutMilliseconds: 5000
        ) { _ in called = true }
        try runLoop(loop, for: 50)
        connector?.cancel()
        connector = nil
        try runLoop(loop, for: 100)
        #expect(!called)
    }
}

/// A UDP nameserver on loopback that answers every query with NXDOMAIN (or never answers), on its own thread.
final class FakeNameserver: @unchecked Sendable {
    let fd: Int32
    let port: Int
    private let answers: Bool
    private var thread: Thread?
    private let lock = NSLockish()
    private var count = 0
    private var isStopping = false

    var queries: Int { lock.with { count } }

    init(answers: Bool = true) throws {
        self.answers = answers
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        var timeout = timeval(tv_sec: 0, tv_usec: 20_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        thread = Thread.start { [self] in serve() }
    }

    private func serve() {
        var packet = [UInt8](repeating: 0, count: 512)
        while !lock.with({ isStopping }) {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let got = packet.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length)
                    }
                }
            }
            guard got >= 12 else { continue }
            lock.with { count += 1 }
            guard answers else { continue }
            // The query echoed back as a response: QR set, RD/RA kept, RCODE 3 (NXDOMAIN), no answers.
            var reply = Array(packet[..<got])
            reply[2] = 0x80 | (reply[2] & 0x01)
            reply[3] = 0x80 | 0x03
            for index in 6..<12 { reply[index] = 0 }
            _ = reply.withUnsafeBytes { raw in
                withUnsafePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, raw.baseAddress, raw.count, 0, $0, length)
                    }
                }
            }
        }
    }

    func stop() {
        lock.with { isStopping = true }
        thread?.join()
        close(fd)
    }
}

/// A pthread mutex (tests only).
final class NSLockish: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func with<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }
}
