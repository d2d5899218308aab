import PresigndHTTP1
import PresigndTestSupport
import Testing

@Suite struct HTTPEncoderTests {
    @Test func roundTripsRequestHead() {
        let head = RequestHead(
            method: "PUT", target: "/b/k%20x?partNumber=1&uploadId=abc",
            headers: ["Host": "h:8080", "x-amz-meta-A": "caf\u{e9}", "x-amz-meta-a": "2", "Content-Length": "3"])
        var bytes: [UInt8] = []
        HTTPEncoder.encode(head, into: &bytes)
        bytes += Array("abc".utf8)
        let t = decodeRequests(bytes)
        #expect(t.messages.first?.head == head)
        #expect(t.messages.first?.bodyText == "abc")
    }

    @Test func encodesRequestHeadBytes() {
        var bytes: [UInt8] = []
        HTTPEncoder.encode(
            RequestHead(method: "GET", target: "/", version: .http1_0, headers: ["A": "b"]), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "GET / HTTP/1.0\r\nA: b\r\n\r\n")
    }

    @Test func roundTripsResponseHead() {
        let head = ResponseHead(status: 206, headers: ["Content-Range": "bytes 0-0/10", "Content-Length": "1"])
        #expect(head.reason == "Partial Content")
        var bytes: [UInt8] = []
        HTTPEncoder.encode(head, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 206 Partial Content\r\n"))
        bytes.append(UInt8(ascii: "x"))
        let t = decodeResponses(String(decoding: bytes, as: UTF8.self))
        #expect(t.messages.first?.head == head)
    }

    @Test func encodesUnknownStatusWithEmptyReason() {
        var bytes: [UInt8] = []
        HTTPEncoder.encode(ResponseHead(status: 299), into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 299 \r\n\r\n")
    }

    @Test(arguments: [
        (0, "0\r\n"), (1, "1\r\n"), (15, "f\r\n"), (16, "10\r\n"), (0x10000, "10000\r\n"), (4095, "fff\r\n"),
        (Int.max, "7fffffffffffffff\r\n"),
    ])
    func formatsChunkHeaderInLowercaseHex(size: Int, expected: String) {
        var bytes: [UInt8] = []
        HTTPEncoder.chunkHeader(size: size, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    @Test func roundTripsEncodedChunks() {
        var bytes = Array("PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for piece in ["hello", " ", "world, this is a longer chunk"] {
            HTTPEncoder.chunkHeader(size: piece.utf8.count, into: &bytes)
            bytes += Array(piece.utf8) + HTTPEncoder.chunkTerminator
        }
        bytes += HTTPEncoder.lastChunk
        let t = decodeRequests(bytes)
        #expect(t.messages.first?.bodyText == "hello world, this is a longer chunk")
        #expect(t.messages.first?.isComplete == true)
        #expect(String(decoding: HTTPEncoder.lastChunk, as: UTF8.self) == "0\r\n\r\n")
    }

    @Test(arguments: [(200, "OK"), (404, "Not Found"), (431, "Request Header Fields Too Large"), (799, "")])
    func namesReasonPhrases(status: Int, reason: String) {
        #expect(HTTPEncoder.reasonPhrase(for: status) == reason)
    }
}
