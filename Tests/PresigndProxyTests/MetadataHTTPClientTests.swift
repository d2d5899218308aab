import PresigndIO
import PresigndSync
import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

/// The credential endpoints' HTTP client against a one-shot server on 127.0.0.1 (a blocking socket on a thread).
@Suite struct MetadataHTTPClientTests {
    /// Listens on 127.0.0.1:0, answers one connection with `response` after reading the request head, and
    /// records that head.
    final class OneShotServer: Sendable {
        let fd: Int32
        let port: Int
        let requestHead = Locked<String>("")

        init(response: String) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            self.fd = fd
            try #require(bound)
            port = Int(UInt16(bigEndian: address.sin_port))
            let listener = fd
            let started = BackgroundThread.start { [self] in
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                var received: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 4096)
                while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                    let count = chunk.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    received += chunk[0..<count]
                }
                requestHead.withLock { $0 = String(decoding: received, as: UTF8.self) }
                var bytes = Array(response.utf8)
                _ = bytes.withUnsafeMutableBytes { write(client, $0.baseAddress, $0.count) }
                close(client)
            }
            try #require(started)
        }

        deinit { close(fd) }
    }

    @Test func putWithHeadersAndAContentLengthBody() throws {
        let server = try OneShotServer(
            response: "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nsome-token!")
        let response = try MetadataHTTPClient.request(
            method: "PUT", host: "127.0.0.1", port: server.port, path: "/latest/api/token",
            headers: [("X-aws-ec2-metadata-token-ttl-seconds", "21600")], timeoutMilliseconds: 5000
        ).get()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "some-token!")
        let head = server.requestHead.withLock { $0 }
        #expect(head.hasPrefix("PUT /latest/api/token HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"))
        #expect(head.contains("X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n"))
        #expect(head.contains("Content-Length: 0\r\n"))
    }

    @Test func chunkedAndCloseDelimitedBodies() throws {
        let chunked = try OneShotServer(
            response: "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        let first = try MetadataHTTPClient.request(
            method: "GET", host: "127.0.0.1", port: chunked.port, path: "/", timeoutMilliseconds: 5000
        ).get()
        #expect(first.status == 404 && first.body == Array("abc".utf8))
        let untilClose = try OneShotServer(response: "HTTP/1.0 200 OK\r\n\r\nrole-name")
        let second = try MetadataHTTPClient.request(
            method: "GET", host: "127.0.0.1", port: untilClose.port, path: "/", timeoutMilliseconds: 5000
        ).get()
        #expect(second.status == 200 && second.body == Array("role-name".utf8))
    }

    @Test func refusedConnectionsAndCutResponsesAreErrors() throws {
        let cut = try OneShotServer(response: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
        guard
            case .failure(let error) = MetadataHTTPClient.request(
                method: "GET", host: "127.0.0.1", port: cut.port, path: "/", timeoutMilliseconds: 5000)
        else {
            Issue.record("a cut response was accepted")
            return
        }
        #expect(error.message.contains("ended mid-response"))
        guard
            case .failure(let refused) = MetadataHTTPClient.request(
                method: "GET", host: "127.0.0.1", port: 1, path: "/", timeoutMilliseconds: 5000)
        else {
            Issue.record("port 1 answered")
            return
        }
        #expect(refused.message.contains("127.0.0.1:1"))
    }
}
