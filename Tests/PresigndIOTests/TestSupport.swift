import PresigndIO
import PresigndTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `loop` until `condition` holds or `milliseconds` pass (a timer guarantees the loop always has something
/// to wait for). Returns whether the condition held.
@discardableResult
func runLoop(_ loop: EventLoop, milliseconds: Int = 5000, until condition: () -> Bool) throws -> Bool {
    var expired = false
    let guardTimer = try LoopTimer(loop: loop) { expired = true }
    try guardTimer.schedule(milliseconds: milliseconds)
    defer { guardTimer.cancel() }
    while !condition() && !expired {
        try loop.runOnce()
    }
    return condition()
}

/// Runs `loop` for `milliseconds`, whatever happens.
func runLoop(_ loop: EventLoop, for milliseconds: Int) throws {
    try runLoop(loop, milliseconds: milliseconds) { false }
}

func setNonBlocking(_ fd: Int32) {
    #expect(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0)
}

/// A connected unix socket pair, both ends non-blocking.
func socketPair() -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    setNonBlocking(fds[0])
    setNonBlocking(fds[1])
    return (fds[0], fds[1])
}

/// A blocking TCP socket connected to 127.0.0.1:`port`.
func connectLoopback(port: Int) -> Int32 {
    let fd = connectToLoopback(port: port)
    #expect(fd >= 0)
    return fd
}

/// A connected loopback TCP pair (a reset needs TCP: SO_LINGER 0 on a unix socket is a plain close), both ends
/// non-blocking.
func tcpPair() throws -> (Int32, Int32) {
    let listening = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
    defer { close(listening.fd) }
    let port = try #require(Int(listening.boundAddress.split(separator: ":").last ?? ""))
    let client = connectLoopback(port: port)
    var server: Int32 = -1
    for _ in 0..<1000 where server < 0 {
        server = accept(listening.fd, nil, nil)
        if server < 0 { usleep(1000) }
    }
    try #require(server >= 0)
    setNonBlocking(client)
    setNonBlocking(server)
    return (client, server)
}

/// Bytes that show where they came from: a wrong order or a lost piece breaks the pattern.
func pattern(_ count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ $0 >> 8) }
}

/// Reads whatever `fd` holds now (non-blocking), up to `limit` bytes.
@discardableResult
func drainSocket(_ fd: Int32, into received: inout [UInt8], limit: Int = .max) -> Int {
    var buffer = [UInt8](repeating: 0, count: 65536)
    var total = 0
    while total < limit {
        let want = min(buffer.count, limit - total)
        let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, want, 0) }
        if got <= 0 { break }
        received.append(contentsOf: buffer[..<got])
        total += got
    }
    return total
}

/// Records what a stream reports.
final class StreamRecorder: StreamDelegate {
    var readable = 0
    var drained = 0
    var ends: [StreamEnd] = []
    var endedAtMilliseconds: Int?
    let startedAt = MonotonicClock.microseconds()
    /// Moves input out on every readable call (when set).
    var received: [UInt8]? = nil
    weak var stream: (any ByteStream)?
    var onReadable: (() -> Void)?
    var onDrained: (() -> Void)?

    func streamReadable() {
        readable += 1
        if received != nil, let stream {
            let count = stream.input.count
            received?.append(contentsOf: stream.input.copyOut(count))
            stream.input.drain(count)
        }
        onReadable?()
    }

    func streamDrained() {
        drained += 1
        onDrained?()
    }

    func streamEnded(_ end: StreamEnd) {
        ends.append(end)
        endedAtMilliseconds = (MonotonicClock.microseconds() - startedAt) / 1000
    }
}

/// Whether two byte sequences are equal, without printing megabytes when they are not: the counts and the first
/// difference go into the issue instead.
func sameBytes(_ actual: [UInt8]?, _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    guard let actual else {
        Issue.record("no bytes, expected \(expected.count)", sourceLocation: sourceLocation)
        return false
    }
    guard actual != expected else { return true }
    let shorter = min(actual.count, expected.count)
    let firstDifference = (0..<shorter).first { actual[$0] != expected[$0] } ?? shorter
    Issue.record(
        "\(actual.count) bytes, expected \(expected.count); first difference at \(firstDifference)",
        sourceLocation: sourceLocation)
    return false
}
