import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// The hand-written formatters on the per-request path (no string interpolation there) give the same
/// text the straightforward forms give.
struct HotPathFormattingTests {
    @Test(arguments: [UInt64(1), 0xABCDEF, 0x1000000, 0xFFFF_FFFF_FFFF, UInt64.max])
    func requestIDMatchesHexFormatting(counter: UInt64) {
        let hex = String(counter, radix: 16, uppercase: true)
        let expected = "0123ABCD07" + String(repeating: "0", count: max(0, 6 - hex.count)) + hex
        #expect(Worker.requestID(prefix: "0123ABCD07", counter: counter) == expected)
    }

    @Test func responseHeadPiecesMatchTheEncoder() {
        var head = ResponseHead(status: 206, reason: "Partial Content")
        head.headers.add(name: "Content-Range", value: "bytes 0-9/100")
        head.headers.add(name: "ETag", value: "\"9b2cf535f27731c974343645a3985328\"")
        var encoded: [UInt8] = []
        HTTPEncoder.encode(head, into: &encoded)
        var pieces: [UInt8] = Array("HTTP/1.1".utf8)
        HTTPEncoder.appendStatusAndReason(206, "Partial Content", into: &pieces)
        for (name, value) in head.headers { HTTPEncoder.appendField(name, value, into: &pieces) }
        pieces += Array("\r\n".utf8)
        #expect(pieces == encoded)
        #expect(String(decoding: pieces, as: UTF8.self).hasPrefix("HTTP/1.1 206 Partial Content\r\nContent-Range: "))
    }

    @Test(arguments: ["Host", "x-amz-date", "X-AMZ-META-ÜNÏ", "", "A-Very-Long-Header-Name-Beyond-Sixteen"])
    func lowercasingMatchesTheStandardLibrary(name: String) {
        let expected = String(decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        #expect(ASCIIName.lowercased(name) == expected)
    }
}
