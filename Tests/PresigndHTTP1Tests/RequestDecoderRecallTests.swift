import PresigndHTTP1
import Testing

/// `RequestDecoder.next(_:available:recall:)`: `recall` sees each complete head's exact bytes, however they arrive,
/// and a caller remembering parses by those bytes decodes exactly what the plain decoder does.
struct RequestDecoderRecallTests {
    static let pipelined =
        "\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        + "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        + "PUT /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc"
        + "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        + "GET /a HTTP/1.0\r\nHost: x\r\n\r\n"
        + "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

    /// Decodes `bytes` fed one way, remembering every parse by its head bytes and handing it back for repeats.
    private func decodeRecalling(_ bytes: [UInt8], feed: Feed) -> (Transcript<RequestHead>, [[UInt8]], Int) {
        var decoder = RequestDecoder()
        var remembered: [[UInt8]: ParsedRequest] = [:]
        var seen: [[UInt8]] = []
        var recalled = 0
        var lastKey: [UInt8] = []
        let transcript = simulate(bytes, feed: feed) { (input, available) throws(HTTPParseError) -> Said<RequestHead> in
            let output = try decoder.next(input, available: available) { head in
                lastKey = Array(head)
                seen.append(lastKey)
                guard let parsed = remembered[lastKey] else { return nil }
                recalled += 1
                return parsed
            }
            if case .head(let head, _) = output {
                remembered[lastKey] = ParsedRequest(
                    head: head, framing: decoder.framing, expectsContinue: decoder.expectsContinue,
                    isKeepAlive: decoder.isKeepAlive)
            }
            return said(output, by: decoder)
        }
        return (transcript, seen, recalled)
    }

    @Test(arguments: Feed.allCases)
    func recallingEarlierParsesDecodesTheSameMessages(feed: Feed) {
        let bytes = Array(Self.pipelined.utf8)
        let (transcript, seen, recalled) = decodeRecalling(bytes, feed: feed)
        #expect(transcript == decodeRequests(bytes, feed: feed))
        #expect(transcript.messages.count == 6)
        // Heads exactly, start line through the empty line: leading empty lines and bodies are not part of them.
        #expect(seen.map { String(decoding: $0, as: UTF8.self) }.first == "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(seen.count == 6)
        #expect(recalled == 2, "the second and fourth GET repeat the first")
    }

    @Test func aRecalledParseIsTakenAsIs() throws {
        var decoder = RequestDecoder()
        let cached = ParsedRequest(
            head: RequestHead(method: "GET", target: "/from-recall"), framing: .none, expectsContinue: false,
            isKeepAlive: false)
        let bytes = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let output = try bytes.withUnsafeBytes { (raw) throws(HTTPParseError) in
            try decoder.next(raw, available: raw.count) { _ in cached }
        }
        guard case .head(let head, let consumed) = output else {
            Issue.record("expected a head, got \(output)")
            return
        }
        #expect(head.target == "/from-recall")
        #expect(consumed == bytes.count)
        #expect(!decoder.isKeepAlive)
    }
}
