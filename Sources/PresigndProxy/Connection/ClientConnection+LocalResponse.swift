import CLibevent
import PresigndHTTP1

/// Responses presignd writes itself: S3 XML errors and the service-level bucket list.
extension ClientConnection {
    /// Writes an S3 XML error. `closing` closes the connection afterwards (unread body, bad framing).
    /// `exchange`: the failed exchange this answers (it is counted and logged as one request).
    func respondLocally(
        error: ProxyError, method: String, resource: String, closing: Bool, isHTTP10: Bool = false,
        requestID: String? = nil, exchange: Exchange? = nil
    ) {
        let requestID = exchange?.requestID ?? requestID ?? worker.nextRequestID()
        let (status, code) = error.statusAndCode
        switch error {
        case .accessDenied, .entityTooLarge, .headersTooLarge, .requestLineTooLong, .requestTimeout:
            worker.metrics.denied(code: code)
        default: break
        }
        let body = error.xmlBody(requestID: requestID, resource: resource)
        if closing { closeAfterResponse = true }
        writeLocal(
            status: status, contentType: "application/xml", body: body, method: method, requestID: requestID,
            extraHeaders: [("x-amz-error-code", code)])
        if let exchange {
            exchange.responseStatus = status
            exchange.responseBodyBytes = body.count
            exchange.ops.errorCode = code
            worker.exchangeEnded(exchange, completed: true)
        } else {
            worker.localResponseSent(
                method: method, path: resource, status: status, bytesOut: body.count, client: peer,
                requestID: requestID, errorCode: code)
        }
        finishLocalResponse()
    }

    /// `GET /` with no bucket at `/`: the configured path-style buckets, as ListBuckets shows them.
    func respondServiceRoot(method: String, isHTTP10: Bool) {
        let requestID = worker.nextRequestID()
        guard method == "GET" || method == "HEAD" else {
            respondLocally(
                error: .accessDenied("only GET and HEAD are served at /"), method: method, resource: "/",
                closing: decoder.framing != .none, requestID: requestID)
            return
        }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<ListAllMyBucketsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        xml += "<Owner><ID>presignd</ID><DisplayName>presignd</DisplayName></Owner><Buckets>"
        for route in settings.router.routes where route.mount.count > 1 {
            let name = String(decoding: route.mount.dropFirst(), as: UTF8.self)
            xml += "<Bucket><Name>" + XMLText.escaped(name) + "</Name>"
            xml += "<CreationDate>1970-01-01T00:00:00.000Z</CreationDate></Bucket>"
        }
        xml += "</Buckets></ListAllMyBucketsResult>\n"
        let body = Array(xml.utf8)
        writeLocal(
            status: 200, contentType: "application/xml", body: body, method: method, requestID: requestID,
            extraHeaders: [])
        worker.localResponseSent(
            method: method, path: "/", status: 200, bytesOut: body.count, client: peer, requestID: requestID,
            errorCode: nil)
        finishLocalResponse()
    }

    func writeLocal(
        status: Int, contentType: String, body: [UInt8], method: String, requestID: String,
        extraHeaders: [(String, String)]
    ) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + body.count)
        bytes.append(contentsOf: "HTTP/1.1 \(status) \(HTTPEncoder.reasonPhrase(for: status))\r\n".utf8)
        bytes.append(contentsOf: "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n".utf8)
        bytes.append(contentsOf: "x-amz-request-id: \(requestID)\r\nServer: presignd\r\n".utf8)
        bytes.append(contentsOf: "x-presignd-request-id: \(requestID)\r\n".utf8)
        for (name, value) in extraHeaders { bytes.append(contentsOf: "\(name): \(value)\r\n".utf8) }
        if closeAfterResponse || worker.isDraining { bytes.append(contentsOf: "Connection: close\r\n".utf8) }
        bytes.append(contentsOf: "\r\n".utf8)
        if method != "HEAD" { bytes.append(contentsOf: body) }
        EvBuffer.add(output, bytes)
    }

    func finishLocalResponse() {
        if closeAfterResponse || worker.isDraining {
            closeWhenFlushed()
        } else if requestPhase == .done {
            requestCycleEnded()
        }
        // Still in the body phase: the decoder's `.end` (a bodyless request) ends the cycle.
    }
}
