import PresigndHTTP1
import PresigndTestSupport
import Testing

/// `ResponseDecoder.forwardsRawFields`: the raw field lines say exactly what the fully parsed head says
/// but for the hop-by-hop fields, framing and keep-alive decisions do not change, and heads needing
/// normalization come fully parsed.
@Suite struct ResponseRawFieldsTests {
    /// Field lines of `rawFields` split the plain way (name up to the colon, value trimmed of OWS).
    static func fields(of raw: [UInt8]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        let text = String(decoding: raw, as: UTF8.self)
        #expect(raw.isEmpty || text.hasSuffix("\r\n"), "every raw line ends with CRLF")
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: false).dropLast() {
            let colon = line.firstIndex(of: ":")!
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            headers.add(name: String(line[..<colon]), value: value)
        }
        return headers
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"x\"\r\nDate: Wed, 02 Dec 2026 15:04:14 GMT\r\n\r\nhello",
        "HTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Amz-Meta-Name:\tcaf\u{e9}  \r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length:2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nConnection: close\r\nKeep-Alive: timeout=5\r\nX-Empty:\r\n\r\nbody until close",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nLocation: /b/k\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nConnection: Keep-Alive , CLOSE\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.0 200 OK\r\nConnection: upgrade\r\nConnection: KEEP-ALIVE\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\nConnection: keep-alive\r\n\r\n0\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\nETag: \"x\"\r\n\r\n",
    ])
    func rawFieldsMatchTheParsedHead(response: String) {
        let parsed = decodeResponses(response)
        let raw = decodeResponses(response, rawFields: true)
        #expect(parsed.error == nil && raw.error == nil)
        #expect(raw.messages.count == parsed.messages.count)
        for (r, p) in zip(raw.messages, parsed.messages) {
            #expect(r.framing == p.framing && r.isKeepAlive == p.isKeepAlive && r.body == p.body)
            #expect(r.head.status == p.head.status && r.head.reason == p.head.reason)
            #expect(p.head.rawFields == nil)
            guard let rawFields = r.head.rawFields else {
                Issue.record("no raw fields for \(p.head.status)")
                continue
            }
            var endToEnd = HTTPHeaders()
            for (name, value) in p.head.headers where !ResponseHead.isHopByHopField(name.utf8) {
                endToEnd.add(name: name, value: value)
            }
            #expect(Self.fields(of: rawFields) == endToEnd)
            // Only the framing fields become Strings.
            for (name, _) in r.head.headers {
                #expect(["content-length", "transfer-encoding", "connection"].contains(name.lowercased()))
            }
        }
    }

    /// Bug f: a field the upstream's `Connection` header names is hop-by-hop for that message (RFC 9110 §7.6.1);
    /// the raw lines would forward it, so such a head comes fully parsed for the proxy to drop the field.
    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nConnection: x-internal-token\r\nX-Internal-Token: secret\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Trace\r\nX-Trace: abc\r\nContent-Length: 1\r\n\r\nx",
    ])
    func aHeadWhoseConnectionFieldNamesAnotherFieldComesFullyParsed(response: String) {
        let raw = decodeResponses(response, rawFields: true)
        #expect(raw.error == nil)
        #expect(raw.messages.count == 1)
        #expect(raw.messages.first?.head.rawFields == nil)
        #expect(raw.messages.first?.body == Array("x".utf8))
    }

    @Test func rawFieldsLeaveOutOnlyHopByHopLines() {
        let response =
            "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nETag: \"x\"\r\nkeep-alive: timeout=5\r\n"
            + "Proxy-Authenticate: Basic\r\nX-Amz-Meta-A:b\r\nTE: trailers\r\nUpgrade: h2c\r\n"
            + "Trailer: x\r\nContent-Length: 3\r\nProxy-Connection: close\r\n\r\nabc"
        let raw = decodeResponses(response, rawFields: true)
        #expect(raw.error == nil)
        let fields = raw.messages.first?.head.rawFields.map { String(decoding: $0, as: UTF8.self) }
        #expect(fields == "ETag: \"x\"\r\nX-Amz-Meta-A:b\r\nContent-Length: 3\r\n")
        // Framing still reads the hop-by-hop fields it needs.
        #expect(raw.messages.first?.isKeepAlive == true)
        #expect(raw.messages.first?.body == Array("abc".utf8))

        let onlyHopByHop = decodeResponses(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", rawFields: true)
        #expect(onlyHopByHop.messages.first?.head.rawFields == [])
        let noFields = decodeResponses("HTTP/1.1 204 No Content\r\n\r\n", rawFields: true)
        #expect(noFields.messages.first?.head.rawFields == [])
    }

    @Test(arguments: [
        "TE", "te", "Trailer", "UPGRADE", "Connection", "Keep-Alive", "Proxy-Connection", "transfer-encoding",
        "Proxy-Authenticate",
    ])
    func hopByHopFieldNames(name: String) {
        #expect(ResponseHead.isHopByHopField(name.utf8))
    }

    @Test(arguments: ["", "T", "Tea", "Content-Length", "Connections", "Keep-Alive-X", "ETag", "X-Upgrade"])
    func endToEndFieldNames(name: String) {
        #expect(!ResponseHead.isHopByHopField(name.utf8))
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: y\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nX: y\r\nContent-Length: 2 , 2\r\n\r\nok",
    ])
    func repeatedContentLengthComesNormalizedWithoutRawFields(response: String) {
        let parsed = decodeResponses(response)
        let raw = decodeResponses(response, rawFields: true)
        #expect(raw.messages.first?.head.rawFields == nil)
        #expect(raw.messages.first?.head.headers == parsed.messages.first?.head.headers)
        #expect(raw.messages.first?.head.headers.values("content-length") == ["2"])
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = self[...]
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
