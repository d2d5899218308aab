import PresigndHTTP1

/// The bytes of a response presignd writes itself (`ClientConnection.writeLocal`), and of the S3 error a connection
/// over `max_connections` gets before it is closed (`Worker.shed`).
enum LocalAnswerEncoding {
    static func response(
        status: Int, contentType: String, body: [UInt8], method: String, requestID: String,
        extraHeaders: [(String, String)], closing: Bool
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + body.count)
        bytes.append(contentsOf: "HTTP/1.1 \(status) \(HTTPEncoder.reasonPhrase(for: status))\r\n".utf8)
        bytes.append(contentsOf: "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n".utf8)
        bytes.append(contentsOf: "x-amz-request-id: \(requestID)\r\nServer: presignd\r\n".utf8)
        bytes.append(contentsOf: "x-presignd-request-id: \(requestID)\r\n".utf8)
        for (name, value) in extraHeaders { bytes.append(contentsOf: "\(name): \(value)\r\n".utf8) }
        if closing { bytes.append(contentsOf: "Connection: close\r\n".utf8) }
        bytes.append(contentsOf: "\r\n".utf8)
        if method != "HEAD" { bytes.append(contentsOf: body) }
        return bytes
    }

    /// The headers of an S3 error: its code, and `Retry-After` for the ones that pass (S3 SDKs retry `SlowDown`).
    static func errorHeaders(_ error: ProxyError) -> [(String, String)] {
        var headers = [("x-amz-error-code", error.statusAndCode.code)]
        if let seconds = error.retryAfterSeconds { headers.append(("Retry-After", String(seconds))) }
        return headers
    }

    /// A whole S3 XML error response that closes the connection.
    static func closingError(_ error: ProxyError, requestID: String, resource: String) -> [UInt8] {
        response(
            status: error.statusAndCode.status, contentType: "application/xml",
            body: error.xmlBody(requestID: requestID, resource: resource), method: "GET", requestID: requestID,
            extraHeaders: errorHeaders(error), closing: true)
    }
}
