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
        let id = RequestID(prefix: "0123ABCD07", counter: counter)
        var bytes = Array("x: ".utf8)
        id.append(to: &bytes)
        #expect(bytes == Array("x: \(expected)".utf8))
        #expect(id.text == expected)
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

    @Test(arguments: [
        ("Host", RequestRewriter.HeaderDisposition.drop), ("CONTENT-LENGTH", .drop), ("Transfer-Encoding", .drop),
        ("X-Amz-Content-SHA256", .payloadHash), ("x-amz-copy-source", .copySource), ("X-Amz-Copy-Source", .copySource),
        ("Connection", .drop), ("X-Amz-Date", .drop), ("X-Forwarded-For", .drop), ("Authorization", .drop),
        ("User-Agent", .forward), ("X-Amz-Meta-ÜNÏ", .forward), ("Range", .forward), ("", .forward),
        ("A-Very-Long-Header-Name-Beyond-Sixteen-Bytes-And-Then-Some", .forward),
    ])
    func headerDispositionIgnoresCase(name: String, expected: RequestRewriter.HeaderDisposition) {
        #expect(RequestRewriter.headerDisposition(name, connectionListed: []) == expected)
    }

    @Test func headersListedInConnectionAreDropped() {
        #expect(RequestRewriter.headerDisposition("X-Trace", connectionListed: ["x-trace"]) == .drop)
        #expect(RequestRewriter.headerDisposition("X-Other", connectionListed: ["x-trace"]) == .forward)
    }
}
