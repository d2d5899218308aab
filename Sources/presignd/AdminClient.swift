#if canImport(Glibc)
    import Glibc
#endif

/// A blocking HTTP/1.1 GET to the daemon's admin listener (`healthcheck`, and `presign` asking for the clock
/// offsets the daemon measured). Loopback, one request per connection, bounded in time and size.
enum AdminClient {
    /// The status and body of `GET path`, or nil when nothing sensible answered within `timeoutSeconds`.
    static func get(host: String, port: Int, path: String, timeoutSeconds: Int, maxBytes: Int = 1 << 20)
        -> (status: Int, body: [UInt8])?
    {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>? = nil
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else { return nil }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return nil }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n"
        let sent = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        guard sent > 0 else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while response.count < maxBytes {
            let received = recv(fd, &buffer, buffer.count, 0)
            if received <= 0 { break }
            response.append(contentsOf: buffer[0..<received])
        }
        // "HTTP/1.1 200 ...", then the head up to the empty line.
        guard response.count >= 12 else { return nil }
        let line = String(decoding: response.prefix(64), as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        let separator: [UInt8] = [13, 10, 13, 10]
        var bodyStart = response.count
        if response.count >= 4 {
            for index in 0...(response.count - 4) where response[index..<(index + 4)].elementsEqual(separator) {
                bodyStart = index + 4
                break
            }
        }
        return (status, Array(response[bodyStart...]))
    }

    /// The clock offset the running daemon measured for `upstream` (`presignd_upstream_clock_offset_seconds` on
    /// its `/metrics`, issue 21 §4), or nil when no daemon answers there.
    static func clockOffset(host: String, port: Int, upstream: String) -> Int? {
        guard let (status, body) = get(host: host, port: port, path: "/metrics", timeoutSeconds: 2), status == 200
        else { return nil }
        let prefix = "presignd_upstream_clock_offset_seconds{upstream=\"\(upstream)\"} "
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            return Int(line.dropFirst(prefix.count))
        }
        return nil
    }
}
