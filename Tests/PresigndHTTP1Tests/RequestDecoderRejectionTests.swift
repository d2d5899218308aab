import PresigndHTTP1
import PresigndTestSupport
import Testing

/// One malformed or smuggling-shaped request, the error it must raise and the status it is answered with.
struct Rejection: Sendable, CustomTestStringConvertible {
    var name: String
    var request: String
    var error: HTTPParseError
    var status = 400
    var testDescription: String { name }
}

private let host = "Host: h\r\n"

@Suite struct RequestDecoderRejectionTests {
    static let framing: [Rejection] = [
        Rejection(
            name: "CL and TE",
            request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            error: .contentLengthAndTransferEncoding),
        Rejection(
            name: "TE and CL",
            request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            error: .contentLengthAndTransferEncoding),
        Rejection(
            name: "two different CL",
            request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
            error: .conflictingContentLength),
        Rejection(
            name: "CL list 5, 6", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5, 6\r\n\r\n",
            error: .conflictingContentLength),
        Rejection(
            name: "CL letters", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: abc\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "CL negative", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: -5\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "CL plus sign", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: +5\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "CL hex", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 0x10\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "CL overflow", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 9223372036854775808\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "CL empty", request: "PUT / HTTP/1.1\r\n\(host)Content-Length:\r\n\r\n", error: .invalidContentLength),
        Rejection(
            name: "CL inner space", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 1 2\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "CL trailing comma", request: "PUT / HTTP/1.1\r\n\(host)Content-Length: 5,\r\n\r\n",
            error: .invalidContentLength),
        Rejection(
            name: "TE chunked, identity",
            request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, identity\r\n\r\n",
            error: .unsupportedTransferEncoding, status: 501),
        Rejection(
            name: "TE identity", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: identity\r\n\r\n",
            error: .unsupportedTransferEncoding, status: 501),
        Rejection(
            name: "TE gzip", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip\r\n\r\n",
            error: .unsupportedTransferEncoding, status: 501),
        Rejection(
            name: "TE gzip, chunked", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n",
            error: .unsupportedTransferEncoding, status: 501),
        Rejection(
            name: "TE chunked twice",
            request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            error: .unsupportedTransferEncoding, status: 501),
        Rejection(
            name: "TE xchunked", request: "PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: xchunked\r\n\r\n",
            error: .unsupportedTransferEncoding, status: 501),
        Rejection(
            name: "TE in HTTP/1.0", request: "PUT / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            error: .transferEncodingInHTTP10),
    ]

    static let chunks: [Rejection] = [
        Rejection(name: "chunk size not hex", request: "zz\r\n", error: .invalidChunkSize),
        Rejection(name: "chunk size empty", request: "\r\n", error: .invalidChunkSize),
        Rejection(name: "chunk size missing before ext", request: ";a=b\r\n", error: .invalidChunkSize),
        Rejection(name: "chunk size then junk", request: "5 x\r\nhello\r\n", error: .invalidChunkSize),
        Rejection(
            name: "chunk size 16 hex digits over Int.max", request: "8000000000000000\r\n", error: .chunkSizeOverflow),
        Rejection(name: "chunk size 17 hex digits", request: "10000000000000000\r\n", error: .chunkSizeOverflow),
        Rejection(name: "chunk ext with NUL", request: "5;a=\u{0}\r\nhello\r\n", error: .invalidChunkExtension),
        Rejection(
            name: "chunk ext too long", request: "5;" + String(repeating: "a", count: 4100) + "\r\n",
            error: .chunkLineTooLong),
        Rejection(name: "no CRLF after chunk data", request: "5\r\nhelloX\r\n0\r\n\r\n", error: .invalidChunkFraming),
        Rejection(name: "LF only after chunk data", request: "5\r\nhello\n0\r\n\r\n", error: .invalidChunkFraming),
        Rejection(name: "bare LF after chunk size", request: "5\nhello\r\n", error: .invalidChunkSize),
        Rejection(name: "bare CR after chunk size", request: "5\rhello\r\n", error: .invalidChunkFraming),
        Rejection(name: "bad trailer name", request: "0\r\nBad Name: x\r\n\r\n", error: .whitespaceBeforeColon),
        Rejection(name: "trailer bare LF", request: "0\r\nT: x\n\r\n", error: .bareLineFeed),
        Rejection(
            name: "trailer too large", request: "0\r\nT: " + String(repeating: "a", count: 16400) + "\r\n\r\n",
            error: .trailerTooLarge),
    ]

    static let syntax: [Rejection] = [
        Rejection(name: "obs-fold", request: "GET / HTTP/1.1\r\n\(host)X: a\r\n b\r\n\r\n", error: .obsFold),
        Rejection(name: "obs-fold with tab", request: "GET / HTTP/1.1\r\n\(host)X: a\r\n\tb\r\n\r\n", error: .obsFold),
        Rejection(name: "whitespace after request line", request: "GET / HTTP/1.1\r\n \(host)\r\n", error: .obsFold),
        Rejection(
            name: "space before colon", request: "GET / HTTP/1.1\r\nHost : h\r\n\r\n", error: .whitespaceBeforeColon),
        Rejection(
            name: "tab before colon", request: "GET / HTTP/1.1\r\nHost\t: h\r\n\r\n", error: .whitespaceBeforeColon),
        Rejection(
            name: "bare CR in value", request: "GET / HTTP/1.1\r\n\(host)X: a\rb\r\n\r\n", error: .bareCarriageReturn),
        Rejection(
            name: "bare CR in request line", request: "GET /\r HTTP/1.1\r\n\(host)\r\n", error: .bareCarriageReturn),
        Rejection(
            name: "bare CR ending the head", request: "GET / HTTP/1.1\r\n\(host)\r\r\n", error: .bareCarriageReturn),
        Rejection(name: "bare LF line endings", request: "GET / HTTP/1.1\nHost: h\n\n", error: .bareLineFeed),
        Rejection(
            name: "bare LF in a field", request: "GET / HTTP/1.1\r\n\(host)X: a\nY: b\r\n\r\n", error: .bareLineFeed),
        Rejection(
            name: "NUL in value", request: "GET / HTTP/1.1\r\n\(host)X: a\u{0}b\r\n\r\n", error: .invalidHeaderValue),
        Rejection(
            name: "CTL in value", request: "GET / HTTP/1.1\r\n\(host)X: a\u{1}b\r\n\r\n", error: .invalidHeaderValue),
        Rejection(
            name: "DEL in value", request: "GET / HTTP/1.1\r\n\(host)X: a\u{7F}b\r\n\r\n", error: .invalidHeaderValue),
        Rejection(
            name: "name not a token", request: "GET / HTTP/1.1\r\n\(host)X(y): z\r\n\r\n", error: .invalidHeaderName),
        Rejection(
            name: "name with UTF-8", request: "GET / HTTP/1.1\r\n\(host)Caf\u{e9}: z\r\n\r\n", error: .invalidHeaderName
        ),
        Rejection(
            name: "field without colon", request: "GET / HTTP/1.1\r\n\(host)Foo\r\n\r\n", error: .invalidHeaderName),
        Rejection(name: "empty field name", request: "GET / HTTP/1.1\r\n\(host): x\r\n\r\n", error: .invalidHeaderName),
        Rejection(name: "missing Host", request: "GET / HTTP/1.1\r\n\r\n", error: .missingHost),
        Rejection(name: "two Hosts", request: "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", error: .multipleHost),
        Rejection(
            name: "two Hosts in 1.0", request: "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", error: .multipleHost),
        Rejection(
            name: "too many leading empty lines", request: "\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\(host)\r\n",
            error: .invalidRequestLine),
    ]

    static let requestLine: [Rejection] = [
        Rejection(name: "no version", request: "GET /\r\n\(host)\r\n", error: .invalidRequestLine),
        Rejection(name: "leading space", request: " GET / HTTP/1.1\r\n\(host)\r\n", error: .invalidRequestLine),
        Rejection(name: "double space", request: "GET  / HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(name: "trailing space", request: "GET / HTTP/1.1 \r\n\(host)\r\n", error: .invalidVersion),
        Rejection(name: "method not a token", request: "G(T / HTTP/1.1\r\n\(host)\r\n", error: .invalidMethod),
        Rejection(name: "space in target", request: "GET /a b HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(
            name: "raw UTF-8 in target", request: "GET /caf\u{e9} HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(name: "tab in target", request: "GET /a\tb HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(name: "fragment in target", request: "GET /a#b HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(name: "asterisk with GET", request: "GET * HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(
            name: "origin-form with CONNECT", request: "CONNECT /x HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(
            name: "CONNECT without port", request: "CONNECT example.com HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(name: "relative target", request: "GET index.html HTTP/1.1\r\n\(host)\r\n", error: .invalidTarget),
        Rejection(name: "lowercase version", request: "GET / http/1.1\r\n\(host)\r\n", error: .invalidVersion),
        Rejection(name: "two-digit minor", request: "GET / HTTP/1.10\r\n\(host)\r\n", error: .invalidVersion),
        Rejection(name: "HTTP/2.0", request: "GET / HTTP/2.0\r\n\(host)\r\n", error: .unsupportedVersion, status: 505),
        Rejection(name: "HTTP/0.9", request: "GET / HTTP/0.9\r\n\(host)\r\n", error: .unsupportedVersion, status: 505),
        Rejection(
            name: "request line too long",
            request: "GET /" + String(repeating: "a", count: 8200) + " HTTP/1.1\r\n\(host)\r\n",
            error: .requestLineTooLong, status: 414),
        Rejection(
            name: "head too large",
            request: "GET / HTTP/1.1\r\n\(host)"
                + String(repeating: "X-Long: \(String(repeating: "v", count: 1000))\r\n", count: 66) + "\r\n",
            error: .headerTooLarge, status: 431),
        Rejection(
            name: "too many fields",
            request: "GET / HTTP/1.1\r\n\(host)" + String(repeating: "X: y\r\n", count: 100) + "\r\n",
            error: .tooManyHeaders, status: 431),
    ]

    @Test(arguments: framing + syntax + requestLine)
    func rejectsMalformedHead(_ rejection: Rejection) {
        let t = decodeRequests(rejection.request)
        #expect(t.messages.isEmpty)
        #expect(t.error == rejection.error)
        #expect(t.error?.status == rejection.status)
    }

    @Test(arguments: chunks)
    func rejectsMalformedChunkedBody(_ rejection: Rejection) {
        let t = decodeRequests("PUT / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\n\r\n" + rejection.request)
        #expect(t.messages.count == 1)
        #expect(t.messages.first?.isComplete == false)
        #expect(t.error == rejection.error)
        #expect(t.error?.status == rejection.status)
    }

    @Test func acceptsExactlyTheHeaderCountLimit() {
        let t = decodeRequests("GET / HTTP/1.1\r\n\(host)" + String(repeating: "X: y\r\n", count: 99) + "\r\n")
        #expect(t.error == nil)
        #expect(t.messages.first?.head.headers.count == 100)
    }

    @Test func rejectsInvalidUTF8InValue() {
        let bytes = Array("GET / HTTP/1.1\r\nHost: h\r\nX: a".utf8) + [0xFF, 0xFE] + Array("\r\n\r\n".utf8)
        #expect(decodeRequests(bytes).error == .invalidHeaderValue)
    }

    @Test func staysFailedAfterAnError() throws {
        var decoder = RequestDecoder()
        let bad = Array("GET / HTTP/1.1\r\nHost : h\r\n\r\n".utf8)
        let good = Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8)
        _ = bad.withUnsafeBytes { input in
            #expect(throws: HTTPParseError.whitespaceBeforeColon) { try decoder.next(input, available: input.count) }
        }
        _ = good.withUnsafeBytes { input in
            #expect(throws: HTTPParseError.whitespaceBeforeColon) { try decoder.next(input, available: input.count) }
        }
    }
}
