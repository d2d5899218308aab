import PresigndHTTP1
import PresigndIO

/// A small blocking HTTP/1.1 client for credential endpoints (ECS/EKS container credentials, EC2 instance
/// metadata): plain HTTP to a link-local or loopback address, one request per connection (`Connection: close`).
/// Built on `PresigndIO` (`Connector`, `SocketStream`) with an event loop of its own on the calling thread, so it
/// runs on a fetch thread, never on a worker's or the daemon's loop. Responses are decoded by `ResponseDecoder`.
enum MetadataHTTPClient {
    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
    }

    /// Largest response accepted: credentials are a few KiB.
    static let maximumResponseBytes = 64 * 1024

    /// One request under one deadline covering connect, send and the whole response.
    static func request(
        method: String, host: String, port: Int, path: String, headers: [(String, String)] = [],
        timeoutMilliseconds: Int
    ) -> Result<Response, CredentialFetchError> {
        let exchange = Exchange(method: method)
        do {
            let loop = try EventLoop()
            let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += method == "PUT" || method == "POST" ? "Content-Length: 0\r\n\r\n" : "\r\n"
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
                    exchange.start(fd: fd, loop: loop, request: Array(head.utf8))
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
        var stream: SocketStream?
        var received: [UInt8] = []
        var result: Result<Response, CredentialFetchError>?
        private weak var loop: EventLoop?

        init(method: String) { self.method = method }

        func start(fd: Int32, loop: EventLoop, request: [UInt8]) {
            self.loop = loop
            do {
                let stream = try SocketStream(loop: loop, fd: fd, maxRead: 16 * 1024)
                self.stream = stream
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
