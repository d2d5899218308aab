import COpenSSL
import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A TLS `SocketStream` against a TLS server on loopback (OpenSSL on a thread of the test, with a certificate that
/// `openssl req` makes for `localhost`): the handshake, hostname verification, and how each kind of close ends
/// the stream.
@Suite(.serialized, .enabled(if: TLSFixture.shared != nil, "the openssl command is not installed"))
struct TLSStreamTests {
    /// A TLS client connection through `SocketStream`; `host` is the name verified against the certificate.
    private final class Client {
        let loop: EventLoop
        let stream: SocketStream
        let recorder = StreamRecorder()
        var handshake: Result<Bool, StreamEnd>?

        init(port: Int, host: String = "localhost", fixture: TLSFixture, maxRead: Int = 256 * 1024) throws {
            // As presignd does: OpenSSL writes with write(2), and a write to a reset peer must not kill the run.
            signal(SIGPIPE, SIG_IGN)
            loop = try EventLoop(lockless: true)
            var connected: Result<Int32, ConnectFailure>?
            let connector = try Connector(loop: loop, host: "127.0.0.1", port: port, timeoutMilliseconds: 2000) {
                connected = $0
            }
            try runLoop(loop) { connected != nil }
            withExtendedLifetime(connector) {}
            guard case .success(let fd) = try #require(connected) else {
                throw IOError.eventLoop("connect failed: \(String(describing: connected))")
            }
            let ssl = try #require(SSL_new(fixture.clientContext))
            #expect(SSL_set1_host(ssl, host) == 1)
            var result: Result<Bool, StreamEnd>?
            stream = try SocketStream(loop: loop, connectedFD: fd, ssl: ssl, maxRead: maxRead) { result = $0 }
            recorder.received = []
            recorder.stream = stream
            stream.delegate = recorder
            stream.setTimeouts(readMilliseconds: 3000, writeMilliseconds: 3000)
            stream.enableReading()
            try runLoop(loop) { result != nil }
            handshake = result
        }
    }

    @Test func completesTheHandshakeAndCarriesBytesBothWays() throws {
        let fixture = try #require(TLSFixture.shared)
        let request = pattern(300_000, seed: 7)
        let server = try TLSServer(fixture: fixture, ending: .closeNotify, echoBytes: request.count)
        defer { server.stop() }
        let client = try Client(port: server.port, fixture: fixture)
        #expect(client.handshake == .success(false))
        try client.stream.output.append(request)
        client.stream.flush()
        try runLoop(client.loop, milliseconds: 10_000) { !client.recorder.ends.isEmpty }
        // The server echoes what it read, then sends close_notify and closes.
        #expect(sameBytes(client.recorder.received, request))
        #expect(client.recorder.ends == [.endOfFile])
        client.stream.close()
    }

    /// `write` on an established connection with nothing queued goes to `SSL_write` from the caller's bytes: the
    /// output stays empty, and the server gets the bytes (it echoes them back).
    @Test func aWriteWithNothingQueuedIsSentAtOnce() throws {
        let head = pattern(900, seed: 3)
        try echoed(head) { client in
            try client.stream.write(head)
            #expect(client.stream.output.count == 0, "sent from the array, not queued")
        }
    }

    /// Writes larger than one record, one after the other: whatever `SSL_write` did not take is queued, and every
    /// byte arrives once, in order.
    @Test func directWritesKeepTheOrderOfEveryByte() throws {
        let all = pattern(1_200_000, seed: 13)
        try echoed(all) { client in
            for range in [0..<500_000, 500_000..<500_100, 500_100..<all.count] {
                try client.stream.write(Array(all[range]))
            }
            client.stream.flush()
        }
    }

    /// Connects to a server that echoes `bytes.count` bytes and then sends close_notify, lets `send` write, and
    /// checks that the echo is `bytes` and the stream's end an end of file.
    private func echoed(_ bytes: [UInt8], send: (Client) throws -> Void) throws {
        let fixture = try #require(TLSFixture.shared)
        let server = try TLSServer(fixture: fixture, ending: .closeNotify, echoBytes: bytes.count)
        defer { server.stop() }
        let client = try Client(port: server.port, fixture: fixture)
        #expect(client.handshake == .success(false))
        try send(client)
        try runLoop(client.loop, milliseconds: 20_000) { !client.recorder.ends.isEmpty }
        #expect(sameBytes(client.recorder.received, bytes))
        #expect(client.recorder.ends == [.endOfFile])
        client.stream.close()
    }

    @Test func aWrongHostnameFailsTheHandshakeWithTheReason() throws {
        let fixture = try #require(TLSFixture.shared)
        let server = try TLSServer(fixture: fixture, ending: .closeNotify)
        defer { server.stop() }
        let client = try Client(port: server.port, host: "wrong.example", fixture: fixture)
        guard case .failure(.failed(let reason)) = try #require(client.handshake) else {
            Issue.record("expected a failed handshake, got \(String(describing: client.handshake))")
            return
        }
        #expect(reason.contains("certificate verification failed"), "\(reason)")
        #expect(reason.contains("hostname mismatch"), "\(reason)")
        #expect(client.recorder.ends.isEmpty)  // handshake failures go to onHandshake only
    }

    /// Sends "hello" to a server that echoes it and ends as `ending` says; returns the client once its stream
    /// ended.
    private func helloUntilTheEnd(_ ending: TLSServer.Ending) throws -> Client {
        let fixture = try #require(TLSFixture.shared)
        let server = try TLSServer(fixture: fixture, ending: ending)
        defer { server.stop() }
        let client = try Client(port: server.port, fixture: fixture)
        #expect(client.handshake == .success(false))
        try client.stream.output.append("hello")
        client.stream.flush()
        try runLoop(client.loop) { !client.recorder.ends.isEmpty }
        return client
    }

    @Test func aCloseWithoutCloseNotifyIsEndOfFile() throws {
        let client = try helloUntilTheEnd(.finOnly)
        #expect(client.recorder.received == Array("hello".utf8))
        #expect(client.recorder.ends == [.endOfFile])
    }

    @Test func aPeerResetIsReset() throws {
        let client = try helloUntilTheEnd(.reset)
        #expect(client.recorder.ends == [.reset])
    }

    /// The server asks for new keys (TLS 1.3 KeyUpdate, update requested) before each piece it echoes: the
    /// stream answers them inside its reads and carries every byte both ways.
    @Test func keyUpdatesFromThePeerKeepTheStreamWorking() throws {
        let fixture = try #require(TLSFixture.shared)
        let request = pattern(300_000, seed: 5)
        // The server stays open after the echo: closing would reset the connection over our last KeyUpdate answer,
        // which it never reads.
        let server = try TLSServer(
            fixture: fixture, ending: .holdOpen, echoBytes: request.count, updatesKeys: true)
        defer { server.stop() }
        let client = try Client(port: server.port, fixture: fixture)
        #expect(client.handshake == .success(false))
        try client.stream.output.append(request)
        client.stream.flush()
        try runLoop(client.loop, milliseconds: 10_000) {
            (client.recorder.received?.count ?? 0) >= request.count || !client.recorder.ends.isEmpty
        }
        #expect(sameBytes(client.recorder.received, request))
        #expect(client.recorder.ends.isEmpty)
        #expect(server.keyUpdates > 0)
        client.stream.close()
    }

    /// Reading paused after every delivery and resumed: what OpenSSL read ahead (records the socket no longer
    /// signals) still arrives once reading is on again, all of it, in order.
    @Test func plaintextHeldByOpenSSLArrivesWhenReadingResumes() throws {
        let fixture = try #require(TLSFixture.shared)
        let request = pattern(40_000, seed: 11)
        // Records of 100 bytes: read-ahead takes ~160 of them from the socket at once.
        let server = try TLSServer(
            fixture: fixture, ending: .holdOpen, echoBytes: request.count, writeChunk: 100)
        defer { server.stop() }
        // The smallest read budget: a read event takes ~4 KiB of records and leaves the rest (in OpenSSL once
        // the socket is empty) to the next one.
        let client = try Client(port: server.port, fixture: fixture, maxRead: 4096)
        #expect(client.handshake == .success(false))
        var pauses = 0
        client.recorder.onReadable = { [unowned stream = client.stream] in
            stream.disableReading()
            pauses += 1
        }
        try client.stream.output.append(request)
        client.stream.flush()
        while let count = client.recorder.received?.count, count < request.count {
            client.stream.enableReading()
            let moved = try runLoop(client.loop) { (client.recorder.received?.count ?? 0) > count }
            guard moved else {
                Issue.record("stuck at \(count) of \(request.count) bytes after \(pauses) pauses")
                break
            }
        }
        #expect(sameBytes(client.recorder.received, request))
        #expect(pauses >= request.count / 8192)
        #expect(client.recorder.ends.isEmpty)
        client.stream.close()
    }

    @Test func aReadTimeoutIsReported() throws {
        let fixture = try #require(TLSFixture.shared)
        let server = try TLSServer(fixture: fixture, ending: .silent)
        defer { server.stop() }
        let client = try Client(port: server.port, fixture: fixture)
        #expect(client.handshake == .success(false))
        client.stream.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0)
        try runLoop(client.loop) { !client.recorder.ends.isEmpty }
        #expect(client.recorder.ends == [.readTimeout])
    }
}

/// A self-signed certificate for `localhost` and a client context that trusts it.
final class TLSFixture: @unchecked Sendable {
    let directory: String
    let clientContext: OpaquePointer
    let serverContext: OpaquePointer

    static let shared: TLSFixture? = TLSFixture()

    private init?() {
        guard access("/usr/bin/openssl", X_OK) == 0 else { return nil }
        directory = "/tmp/presignd-io-tls-\(getpid())"
        mkdir(directory, 0o700)
        let command =
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost "
            + "-addext subjectAltName=DNS:localhost -keyout \(directory)/key.pem -out \(directory)/cert.pem "
            + ">/dev/null 2>&1"
        guard system(command) == 0 else { return nil }
        guard let client = SSL_CTX_new(TLS_client_method()), let server = SSL_CTX_new(TLS_server_method()) else {
            return nil
        }
        SSL_CTX_set_verify(client, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_load_verify_locations(client, "\(directory)/cert.pem", nil) == 1,
            SSL_CTX_use_certificate_chain_file(server, "\(directory)/cert.pem") == 1,
            SSL_CTX_use_PrivateKey_file(server, "\(directory)/key.pem", SSL_FILETYPE_PEM) == 1
        else { return nil }
        clientContext = client
        serverContext = server
    }
}

/// A one-connection TLS server on a thread: handshake, echo `echoBytes` bytes, then end as told.
final class TLSServer: @unchecked Sendable {
    enum Ending {
        /// close_notify, then close.
        case closeNotify
        /// close without close_notify (a FIN).
        case finOnly
        /// close with SO_LINGER 0 (an RST).
        case reset
        /// say nothing until stopped.
        case silent
        /// echo, then keep the connection open until stopped.
        case holdOpen
    }

    let port: Int
    private let listener: ListenSocket
    private var thread: Thread?
    private let lock = NSLockish()
    private var isStopping = false

    /// How many key updates the server asked for (`updatesKeys`).
    var keyUpdates: Int { lock.with { updatesSent } }
    private var updatesSent = 0
    private let updatesKeys: Bool

    /// - Parameters:
    ///   - writeChunk: the most one `SSL_write` (one record) of the echo carries.
    ///   - updatesKeys: a KeyUpdate asking the client for one too before each piece echoed.
    init(
        fixture: TLSFixture, ending: Ending, echoBytes: Int = 5, writeChunk: Int = 65536, updatesKeys: Bool = false
    ) throws {
        self.updatesKeys = updatesKeys
        listener = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
        port = Int(listener.boundAddress.split(separator: ":").last ?? "") ?? 0
        let listenFD = listener.fd
        thread = Thread.start { [self, fixture] in
            serve(
                listenFD: listenFD, context: fixture.serverContext, ending: ending, echoBytes: echoBytes,
                writeChunk: writeChunk)
        }
    }

    private var stopping: Bool { lock.with { isStopping } }

    private func serve(listenFD: Int32, context: OpaquePointer, ending: Ending, echoBytes: Int, writeChunk: Int) {
        var fd: Int32 = -1
        while fd < 0 && !stopping {
            fd = accept(listenFD, nil, nil)
            if fd < 0 { usleep(2000) }
        }
        guard fd >= 0 else { return }
        defer { close(fd) }
        // Blocking from here on, with a receive timeout that only a stuck test reaches.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let ssl = SSL_new(context) else { return }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, fd)
        guard SSL_accept(ssl) == 1 else { return }
        if ending == .silent {
            while !stopping { usleep(5000) }
            return
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var echoed = 0
        while echoed < echoBytes && !stopping {
            let want = min(buffer.count, echoBytes - echoed)
            let got = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(want)) }
            guard got > 0 else { return }
            echoed += Int(got)
            if updatesKeys && SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 {
                lock.with { updatesSent += 1 }
            }
            var sent = 0
            while sent < Int(got) {
                let length = Int32(min(writeChunk, Int(got) - sent))
                let wrote = buffer.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + sent, length) }
                guard wrote > 0 else { return }
                sent += Int(wrote)
            }
        }
        switch ending {
        case .closeNotify:
            SSL_shutdown(ssl)
        case .finOnly, .silent:
            break
        case .holdOpen:
            while !stopping { usleep(5000) }
        case .reset:
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
    }

    func stop() {
        lock.with { isStopping = true }
        thread?.join()
        close(listener.fd)
    }
}
