import PresigndHTTP1
import PresigndTestSupport
import Testing

@Suite struct RequestDecoderValidTests {
    @Test func decodesGetWithoutBody() {
        let t = decodeRequests("GET /bucket/key?list-type=2 HTTP/1.1\r\nHost: localhost:8080\r\nAccept: */*\r\n\r\n")
        #expect(t.error == nil)
        #expect(t.messages.count == 1)
        let m = t.messages[0]
        #expect(m.head.method == "GET")
        #expect(m.head.target == "/bucket/key?list-type=2")
        #expect(m.head.version == .http1_1)
        #expect(m.head.headers["host"] == "localhost:8080")
        #expect(m.head.headers.count == 2)
        #expect(m.framing == .none && m.isComplete && m.body.isEmpty && m.isKeepAlive && !m.expectsContinue)
    }

    @Test func decodesPutWithContentLength() {
        let t = decodeRequests("PUT /b/k HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(t.error == nil)
        #expect(t.messages.first?.framing == .contentLength(11))
        #expect(t.messages.first?.bodyText == "hello world")
        #expect(t.messages.first?.isComplete == true)
    }

    @Test func decodesChunkedPutWithExtensionsAndTrailers() {
        let t = decodeRequests(
            "PUT /b/k HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n6 ; a=\"b c\"\r\n world\r\n000;last\r\nX-Checksum: abc\r\nX-Other:  d \r\n\r\n"
        )
        #expect(t.error == nil)
        let m = t.messages[0]
        #expect(m.framing == .chunked)
        #expect(m.bodyText == "hello world")
        #expect(m.trailers == ["X-Checksum": "abc", "X-Other": "d"])
        #expect(m.isComplete)
    }

    @Test func decodesThreePipelinedRequestsInOrder() {
        let t = decodeRequests(
            "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
                + "PUT /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
                + "DELETE /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(t.error == nil)
        #expect(t.messages.map(\.head.target) == ["/1", "/2", "/3"])
        #expect(t.messages.map(\.bodyText) == ["", "abc", ""])
        #expect(t.messages.map(\.isComplete) == [true, true, true])
        #expect(t.messages.map(\.isKeepAlive) == [true, true, false])
    }

    @Test func parsesNextRequestAfterChunkedBodyWithTrailers() {
        let t = decodeRequests(
            "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n"
                + "GET /b HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(t.error == nil)
        #expect(t.messages.map(\.head.target) == ["/a", "/b"])
        #expect(t.messages[1].trailers.isEmpty)
    }

    @Test(arguments: [
        ("GET / HTTP/1.0\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false),
        ("GET / HTTP/1.1\r\nHost: h\r\nConnection: TE, Close\r\n\r\n", false),
        ("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
    ])
    func keepAliveFollowsVersionAndConnection(request: String, keepAlive: Bool) {
        #expect(decodeRequests(request).messages.first?.isKeepAlive == keepAlive)
    }

    @Test(arguments: [
        ("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx", true),
        ("PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\nx", true),
        ("PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx", false),
        ("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx", false),
    ])
    func reportsExpectContinue(request: String, expects: Bool) {
        let t = decodeRequests(request)
        #expect(t.messages.first?.expectsContinue == expects)
        #expect(t.messages.first?.bodyText == "x")
    }

    @Test(arguments: [
        ("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "GET", "/"),  // RFC 9112 §2.2 leading empty line
        ("\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "GET", "/"),
        ("GET http://example.com/b/k?x HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET", "http://example.com/b/k?x"),
        ("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", "OPTIONS", "*"),
        ("OPTIONS /x HTTP/1.1\r\nHost: h\r\n\r\n", "OPTIONS", "/x"),
        ("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", "CONNECT", "example.com:443"),
        ("get /lower-case-method-is-a-token HTTP/1.1\r\nHost: h\r\n\r\n", "get", "/lower-case-method-is-a-token"),
        ("GET /a%20b?c=%2F&d=[]|^`{} HTTP/1.1\r\nHost: h\r\n\r\n", "GET", "/a%20b?c=%2F&d=[]|^`{}"),
        ("GET / HTTP/1.0\r\n\r\n", "GET", "/"),  // HTTP/1.0 needs no Host
    ])
    func acceptsRequestLine(request: String, method: String, target: String) {
        let t = decodeRequests(request)
        #expect(t.error == nil)
        #expect(t.messages.first?.head.method == method)
        #expect(t.messages.first?.head.target == target)
    }

    @Test func readsHigherMinorVersionAsHTTP11() {
        #expect(decodeRequests("GET / HTTP/1.2\r\nHost: h\r\n\r\n").messages.first?.head.version == .http1_1)
    }

    @Test func keepsFieldOrderCaseAndTrimsOptionalWhitespace() {
        let t = decodeRequests(
            "GET / HTTP/1.1\r\nHost: h\r\nX-Amz-Meta-A: \t one two \t\r\nx-amz-meta-a:2\r\nEmpty:\r\nUTF8: caf\u{e9}\r\n\r\n"
        )
        let headers = t.messages.first?.head.headers ?? HTTPHeaders()
        #expect(Array(headers.map(\.name)) == ["Host", "X-Amz-Meta-A", "x-amz-meta-a", "Empty", "UTF8"])
        #expect(headers.values("X-AMZ-META-A") == ["one two", "2"])
        #expect(headers["empty"] == "")
        #expect(headers["utf8"] == "caf\u{e9}")
    }

    @Test(arguments: [
        "Content-Length: 5\r\nContent-Length: 5\r\n",
        "Content-Length: 5, 5\r\n",
        "Content-Length: 005\r\n",
    ])
    func acceptsAndCollapsesIdenticalContentLengths(fields: String) {
        let t = decodeRequests("PUT / HTTP/1.1\r\nHost: h\r\n\(fields)\r\nhello")
        #expect(t.error == nil)
        #expect(t.messages.first?.framing == .contentLength(5))
        #expect(t.messages.first?.bodyText == "hello")
        #expect(t.messages.first?.head.headers.values("content-length").count == 1)
    }

    @Test(arguments: ["chunked", "Chunked", "CHUNKED ", " chunked"])
    func acceptsChunkedCaseInsensitively(coding: String) {
        let t = decodeRequests("PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\(coding)\r\n\r\n1\r\nx\r\n0\r\n\r\n")
        #expect(t.error == nil)
        #expect(t.messages.first?.bodyText == "x")
    }

    @Test func acceptsContentLengthZeroAsAnEmptyBody() {
        let t = decodeRequests(
            "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(t.messages.map(\.framing) == [.contentLength(0), .none])
        #expect(t.messages.map(\.isComplete) == [true, true])
    }

    @Test func waitsForTheRestOfAnIncompleteMessage() {
        let t = decodeRequests("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
        #expect(t.error == nil)
        #expect(t.messages.first?.bodyText == "abc")
        #expect(t.messages.first?.isComplete == false)
        #expect(decodeRequests("GET / HTTP/1.1\r\nHost: h\r\n").messages.isEmpty)
    }
}
