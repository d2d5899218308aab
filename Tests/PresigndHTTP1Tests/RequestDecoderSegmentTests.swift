import PresigndHTTP1
import Testing

/// The caller contract at the level of single calls: what is consumed, and that body bytes are never read.
@Suite struct RequestDecoderSegmentTests {
    @Test func continuesAHeadSplitAcrossSegments() throws {
        let bytes = Array("GET /k HTTP/1.1\r\nHost: h\r\n\r\nNEXT".utf8)
        var decoder = RequestDecoder()
        let first = try bytes.withUnsafeBytes { try decoder.next(UnsafeRawBufferPointer(rebasing: $0[..<10]), available: $0.count) }
        #expect(first == .needMore(consumed: 10))
        let rest = Array(bytes[10...])
        let second = try rest.withUnsafeBytes { try decoder.next(UnsafeRawBufferPointer(rebasing: $0[..<7]), available: $0.count) }
        #expect(second == .needMore(consumed: 7))
        let tail = Array(rest[7...])
        let third = try tail.withUnsafeBytes { try decoder.next($0, available: $0.count) }
        // Only the head's bytes are consumed: "NEXT" (a pipelined request) stays with the caller.
        #expect(third == .head(RequestHead(method: "GET", target: "/k", headers: ["Host": "h"]), consumed: tail.count - 4))
    }

    @Test func countsContentLengthBodyWithoutReadingIt() throws {
        let head = Array("PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n".utf8)
        var decoder = RequestDecoder()
        let output = try head.withUnsafeBytes { try decoder.next($0, available: $0.count + 60) }
        #expect(output == .head(RequestHead(method: "PUT", target: "/", headers: ["Host": "h", "Content-Length": "100"]), consumed: head.count))
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        // The body lies in later segments: the decoder only counts it.
        #expect(try decoder.next(empty, available: 60) == .body(skip: 0, count: 60))
        #expect(try decoder.next(empty, available: 0) == .needMore(consumed: 0))
        #expect(try decoder.next(empty, available: 500) == .body(skip: 0, count: 40))
        #expect(try decoder.next(empty, available: 460) == .end(consumed: 0))
    }

    @Test func reportsChunkDataAfterItsSizeLineWithoutReadingIt() throws {
        var decoder = RequestDecoder()
        let head = Array("PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        _ = try head.withUnsafeBytes { try decoder.next($0, available: $0.count) }
        let line = Array("1f4;x=y\r\n".utf8)
        #expect(try line.withUnsafeBytes { try decoder.next($0, available: $0.count + 1000) } == .body(skip: 9, count: 500))
        let crlf = Array("\r\n0\r\n\r\n".utf8)
        #expect(try crlf.withUnsafeBytes { try decoder.next($0, available: $0.count) } == .end(consumed: 7))
    }

    @Test func endsABodylessRequestWithoutConsuming() throws {
        var decoder = RequestDecoder()
        let two = Array("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        let firstHead = try two.withUnsafeBytes { try decoder.next($0, available: $0.count) }
        guard case .head(_, let consumed) = firstHead else { Issue.record("no head"); return }
        let rest = Array(two[consumed...])
        #expect(try rest.withUnsafeBytes { try decoder.next($0, available: $0.count) } == .end(consumed: 0))
        let second = try rest.withUnsafeBytes { try decoder.next($0, available: $0.count) }
        #expect(second == .head(RequestHead(method: "GET", target: "/b", headers: ["Host": "h"]), consumed: rest.count))
    }

    @Test func reportsIdleOnlyBetweenRequests() throws {
        var decoder = RequestDecoder()
        #expect(decoder.isIdle)
        let partial = Array("GE".utf8)
        _ = try partial.withUnsafeBytes { try decoder.next($0, available: $0.count) }
        #expect(!decoder.isIdle)
    }
}
