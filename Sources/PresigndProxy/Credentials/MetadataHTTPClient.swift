import PresigndHTTP1
import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// A small blocking HTTP/1.1 client for credential endpoints (ECS/EKS container credentials, EC2 instance
/// metadata, STS): plain HTTP to a link-local or loopback address, or HTTPS verified with a `TLSClientContext`
/// (the upstreams' TLS code: peer and host name checked); one request per connection (`Connection: close`).
/// Built on `PresigndIO` (`Connector`, then a plain or TLS `SocketStream`) with an event loop of its own on the
/// calling thread, so it runs on a fetch thread, never on a worker's or the daemon's loop. Responses are decoded
/// by `ResponseDecoder`.
enum MetadataHTTPClient {
    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// Largest response accepted: credentials are a few KiB.
    static let maximumResponseBytes = 64 * 1024

    /// The `Host` header for `host:port` (the port only when it is not the scheme's default, IPv6 in brackets):
    /// what is sent, and what a signed request (STS) signs.
    static func hostHeader(host: String, port: Int, usesTLS: Bool) -> String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (usesTLS ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// One request under one deadline covering connect, the TLS handshake (with `tls`), send and the whole
    /// response.
    static func request(
        method: String, host: String, port: Int, path: String, headers: [(String, String)] = [], body: [UInt8] = [],
        tls: TLSClientContext? = nil, timeoutMilliseconds: Int
    ) -> Result<Response, CredentialFetchError> {
        let exchange = Exchange(method: method, host: host, tls: tls)
        do {
            let loop = try EventLoop()
            let hostHeader = hostHeader(host: host, port: port, usesTLS: tls != nil)
            var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let hasBody = method == "PUT" || method == "POST" || !body.isEmpty
            head += hasBody ? "Content-Length: \(body.count)\r\n\r\n" : "\r\n"
            let deadline = try LoopTimer(loop: loop) {
                exchange.finish(.failure(CredentialFetchError("no answer within \(timeoutMilliseconds) ms")), loop)
            }
            try deadline.schedule(milliseconds: timeoutMilliseconds)
            let connector = try Connector(
                loop: loop, host: host, port: port, timeoutMilliseconds: timeoutMilliseconds
            ) { result in
                switch result {
                case .failure(let failure):
                    exchange.finish(.failure(CredentialFetchError("\(host):\(port): \(failure)")), loop)
                case .success(let fd):
                    exchange.start(fd: fd, loop: loop, request: Array(head.utf8) + body)
                }
            }
            try loop.run()
            connector.cancel()
            deadline.cancel()
            exchange.stream?.close()
        } catch {
            return .failure(CredentialFetchError("HTTP client: \(error)"))
        }
        return exchange.result ?? .failure(CredentialFetchError("the HTTP exchange ended without an answer"))
    }

    /// One request's connection and what came back (loop thread only).
    private final class Exchange: StreamDelegate {
        let method: String
        let host: String
        let tls: TLSClientContext?
        /// Kept alive here: the SSL's ex_data points at it unretained.
        let sessions = TLSSessionStore()
        var stream: ByteStream?
        var received: [UInt8] = []
        var result: Result<Response, CredentialFetchError>?
        private weak var loop: EventLoop?

        init(method: String, host: String, tls: TLSClientContext?) {
            self.method = method
            self.host = host
            self.tls = tls
        }

        func start(fd: Int32, loop: EventLoop, request: [UInt8]) {
            self.loop = loop
            do {
                guard let tls else {
                    let stream = try SocketStream(loop: loop, fd: fd, maxRead: 16 * 1024)
                    self.stream = stream
                    send(request, on: stream)
                    return
                }
                guard let ssl = tls.makeSSL(host: host, sessions: sessions) else {
                    close(fd)
                    finish(.failure(CredentialFetchError("HTTP client: SSL_new failed")), loop)
                    return
                }
                // The request goes out once the handshake (with the peer's certificate and name verified) is done.
                let stream = try SocketStream(loop: loop, connectedFD: fd, ssl: ssl, maxRead: 16 * 1024) {
                    [unowned self] outcome in
                    switch outcome {
                    case .success:
                        if let stream = self.stream { self.send(request, on: stream) }
                    case .failure(let end):
                        self.finish(.failure(CredentialFetchError("TLS handshake with \(self.host): \(end)")), loop)
                    }
                }
                self.stream = stream
            } catch {
                finish(.failure(CredentialFetchError("HTTP client: \(error)")), loop)
            }
        }

        private func send(_ request: [UInt8], on stream: ByteStream) {
            guard let loop else { return }
            do {
                stream.delegate = self
                try stream.output.append(request)
                stream.flush()
                stream.enableReading()
            } catch {
                finish(.failure(CredentialFetchError("HTTP client: \(error)")), loop)
            }
        }

        func finish(_ outcome: Result<Response, CredentialFetchError>, _ loop: EventLoop) {
            guard result == nil else { return }
            result = outcome
            loop.exit()
        }

        func streamReadable() {
            guard let stream, let loop else { return }
            let count = stream.input.count
            received += stream.input.copyOut(count)
            stream.input.drain(count)
            if received.count > maximumResponseBytes {
                finish(.failure(CredentialFetchError("the response is larger than 64 KiB")), loop)
            } else if case .complete(let response) = decode(atEnd: false) {
                finish(.success(response), loop)
            }
        }

        func streamDrained() {}

        func streamEnded(_ end: StreamEnd) {
            guard let loop else { return }
            switch decode(atEnd: end == .endOfFile) {
            case .complete(let response): finish(.success(response), loop)
            case .incomplete: finish(.failure(CredentialFetchError("the connection ended mid-response (\(end))")), loop)
            case .malformed(let error): finish(.failure(CredentialFetchError("malformed response: \(error)")), loop)
            }
        }

        enum Decoded {
            case complete(Response)
            case incomplete
            case malformed(HTTPParseError)
        }

        /// Decodes everything received so far from the start (responses are tiny).
        func decode(atEnd: Bool) -> Decoded {
            var decoder = ResponseDecoder()
            var offset = 0
            var status: Int?
            var body: [UInt8] = []
            while true {
                let attempt = received[offset...].withUnsafeBytes { raw in
                    Result { () throws(HTTPParseError) in
                        try decoder.next(raw, available: raw.count, requestMethod: method)
                    }
                }
                let step: ResponseDecoderOutput
                switch attempt {
                case .success(let output): step = output
                case .failure(let error): return .malformed(error)
                }
                switch step {
                case .needMore(let consumed):
                    offset += consumed
                    guard atEnd, let status, decoder.finishOnClose() else { return .incomplete }
                    return .complete(Response(status: status, body: body))
                case .head(let head, let consumed):
                    offset += consumed
                    if !head.isInterim { status = head.status }
                case .body(let skip, let count):
                    body += received[(offset + skip)..<(offset + skip + count)]
                    offset += skip + count
                case .end(let consumed):
                    offset += consumed
                    if let status { return .complete(Response(status: status, body: body)) }
                }
            }
        }
    }
}
