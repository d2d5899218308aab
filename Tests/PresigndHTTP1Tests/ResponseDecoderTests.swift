import PresigndHTTP1
import PresigndTestSupport
import Testing

@Suite struct ResponseDecoderTests {
    @Test func decodesContentLengthResponse() {
        let t = decodeResponses("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"x\"\r\n\r\nhello")
        #expect(t.error == nil)
        let m = t.messages[0]
        #expect(m.head.status == 200 && m.head.reason == "OK" && m.head.headers["etag"] == "\"x\"")
        #expect(m.framing == .contentLength(5) && m.bodyText == "hello" && m.isComplete && m.isKeepAlive)
    }

    @Test func decodesChunkedResponseWithTrailers() {
        let t = decodeResponses(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\nExpires: never\r\n\r\n"
        )
        #expect(t.error == nil)
        #expect(t.messages[0].bodyText == "Wikipedia")
        #expect(t.messages[0].trailers == ["Expires": "never"])
    }

    @Test func endsHeadResponseAtItsHeadDespiteContentLength() {
        let t = decodeResponses(
            "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            methods: ["HEAD", "GET"])
        #expect(t.error == nil)
        #expect(t.messages.map(\.framing) == [.none, .contentLength(2)])
        #expect(t.messages.map(\.bodyText) == ["", "ok"])
        #expect(t.messages[0].head.headers["content-length"] == "1234")
    }

    @Test(arguments: [204, 304])
    func endsNoContentAndNotModifiedAtTheirHead(status: Int) {
        let t = decodeResponses(
            "HTTP/1.1 \(status) X\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(t.error == nil)
        #expect(t.messages.map(\.head.status) == [status, 200])
        #expect(t.messages.map(\.framing) == [.none, .contentLength(0)])
    }

    @Test func readsUntilCloseWithoutLength() {
        var decoder = ResponseDecoder()
        let t = decodeResponses("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of this, until EOF")
        #expect(t.messages[0].framing == .untilClose)
        #expect(t.messages[0].bodyText == "all of this, until EOF")
        #expect(!t.messages[0].isKeepAlive && !t.messages[0].isComplete)
        let head = Array("HTTP/1.0 200 OK\r\n\r\n".utf8)
        let output = try? head.withUnsafeBytes { try decoder.next($0, available: $0.count + 3, requestMethod: "GET") }
        #expect(output == .head(ResponseHead(version: .http1_0, status: 200), consumed: head.count))
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect((try? decoder.next(empty, available: 3, requestMethod: "GET")) == .body(skip: 0, count: 3))
        let cleanEnd = decoder.finishOnClose()
        #expect(cleanEnd)
    }

    @Test func reportsTruncatedContentLengthBodyAtClose() throws {
        var decoder = ResponseDecoder()
        let bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".utf8)
        _ = try bytes.withUnsafeBytes { try decoder.next($0, available: $0.count, requestMethod: "GET") }
        let cleanEnd = decoder.finishOnClose()
        #expect(!cleanEnd)
        #expect(decoder.isIdle == false)
    }

    @Test func reportsInterimContinueBeforeTheFinalResponse() {
        let t = decodeResponses(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 1\r\n\r\nx",
            methods: ["PUT", "GET"])
        #expect(t.error == nil)
        #expect(t.messages.map(\.head.status) == [100, 200, 404])
        #expect(t.messages.map(\.head.isInterim) == [true, false, false])
        #expect(t.messages.map(\.isComplete) == [true, true, true])
        #expect(t.messages[2].bodyText == "x")
    }

    @Test(arguments: [
        ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
        ("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", true),
        ("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false),
        ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
    ])
    func keepAliveFollowsVersionAndConnection(response: String, keepAlive: Bool) {
        #expect(decodeResponses(response).messages.first?.isKeepAlive == keepAlive)
    }

    @Test func acceptsStatusLineWithoutReason() {
        let t = decodeResponses("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\nHTTP/1.1 201 \r\nContent-Length: 0\r\n\r\n")
        #expect(t.error == nil)
        #expect(t.messages.map(\.head.reason) == ["", ""])
    }

    @Test(arguments: [
        ("HTTP/1.1 20 OK\r\n\r\n", HTTPParseError.invalidStatusLine),
        ("HTTP/1.1 2000 OK\r\n\r\n", .invalidStatusLine),
        ("HTTP/1.1 099 Low\r\n\r\n", .invalidStatusLine),
        ("HTTP/2 200 OK\r\n\r\n", .invalidStatusLine),
        ("HTTP/2.0 200 OK\r\n\r\n", .unsupportedVersion),
        ("HTTP/1.1 200 O\u{1}K\r\n\r\n", .invalidStatusLine),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", .unexpectedUpgrade),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            .contentLengthAndTransferEncoding
        ),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", .unsupportedTransferEncoding),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            .unsupportedTransferEncoding
        ),
        ("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .transferEncodingInHTTP10),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nx", .conflictingContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .conflictingContentLength),
        ("HTTP/1.1 200 OK\nContent-Length: 0\n\n", .bareLineFeed),
        ("HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", .obsFold),
        ("HTTP/1.1 200 " + String(repeating: "r", count: 8200) + "\r\n\r\n", .statusLineTooLong),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcdefg", .invalidChunkFraming),
    ])
    func rejectsMalformedResponse(response: String, error: HTTPParseError) {
        #expect(decodeResponses(response).error == error)
        #expect(decodeResponses(response, rawFields: true).error == error, "raw fields")
    }
}
