import PresigndHTTP1
import PresigndIO

/// Responses presignd writes itself: S3 XML errors, the service-level bucket list, redirects.
extension ClientConnection {
    /// Writes a local answer. An exchange in flight is the request it answers: counted and logged as one.
    func writeAnswer(_ answer: LocalAnswer, closing: Bool) {
        let exchange = self.exchange
        self.exchange = nil
        switch answer {
        case .error(let error):
            let requestID = exchange?.requestID ?? worker.nextRequestID()
            let (status, code) = error.statusAndCode
            var denial: (operation: String, rule: String)? = nil
            switch error {
            case .accessDenied, .entityTooLarge, .headersTooLarge, .requestLineTooLong, .requestTimeout, .slowDown,
                .bodyTooSlow:
                worker.metrics.denied(code: code)
            case .policyDenied(let policyDenial, let operation):
                worker.metrics.denied(code: code)
                worker.metrics.policyDenied(operation: operation, reason: policyDenial.reason.rawValue)
                denial = (operation, policyDenial.rule)
            default: break
            }
            let resource: String
            let method: String
            if let exchange {
                (resource, method) = (exchange.logPath, exchange.method)
            } else {
                let summary = request  // copied first: `logPath` is computed, not inside the access to `request`
                (resource, method) = (summary.logPath, summary.method)
            }
            let body = error.xmlBody(requestID: requestID, resource: resource)
            writeLocal(
                status: status, contentType: "application/xml", body: body, method: method, requestID: requestID,
                extraHeaders: LocalAnswerEncoding.errorHeaders(error), closing: closing)
            if let exchange {
                exchange.responseStatus = status
                exchange.responseBodyBytes = body.count
                exchange.ops.errorCode = code
                if let denial {
                    exchange.ops.operation = denial.operation
                    exchange.ops.policyRule = denial.rule
                }
                worker.exchangeEnded(exchange, completed: true)
            } else {
                worker.localResponseSent(
                    method: method, path: resource, status: status, bytesOut: body.count, client: peer,
                    requestID: requestID, errorCode: code, denial: denial, principal: principalName,
                    principalLabel: principalLabel)
            }
        case .cached(let response):
            writeCached(response, closing: closing)
        case .prepared(let response):
            let requestID = worker.nextRequestID()
            writeLocal(
                status: response.status, contentType: response.contentType, body: response.body,
                method: response.method, requestID: requestID, extraHeaders: response.extraHeaders, closing: closing)
            if let bucket = response.redirectBucket { worker.metrics.redirectServed(bucket: bucket) }
            worker.localResponseSent(
                method: response.method, path: response.logPath, status: response.status,
                bytesOut: response.method == "HEAD" ? 0 : response.body.count, client: peer, requestID: requestID,
                errorCode: nil)
        }
    }

    /// `GET /` with no bucket at `/`: the configured path-style buckets, as ListBuckets shows them.
    func serviceRoot(method: String) -> LocalAnswer {
        guard method == "GET" || method == "HEAD" else {
            return .error(.accessDenied("only GET and HEAD are served at /"))
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
        request.logPath = "/"
        return .prepared(
            PreparedResponse(
                status: 200, contentType: "application/xml", body: Array(xml.utf8), extraHeaders: [], method: method,
                logPath: "/"))
    }

    func writeLocal(
        status: Int, contentType: String, body: [UInt8], method: String, requestID: String,
        extraHeaders: [(String, String)], closing: Bool
    ) {
        write(
            LocalAnswerEncoding.response(
                status: status, contentType: contentType, body: body, method: method, requestID: requestID,
                extraHeaders: extraHeaders, closing: closing))
    }
}
