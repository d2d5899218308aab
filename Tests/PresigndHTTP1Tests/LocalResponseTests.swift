import PresigndHTTP1
import PresigndTestSupport
import Testing

@Suite struct LocalResponseTests {
    static let error = LocalResponse(
        status: 404, contentType: "application/xml", body: Array("<Error/>".utf8), requestID: "req-00002A",
        headers: [("x-amz-error-code", "NoSuchBucket")])

    static func text(_ response: LocalResponse, answering method: String = "GET") -> String {
        String(decoding: response.encoded(answering: method), as: UTF8.self)
    }

    @Test func writesTheStatusLineFixedFieldsRequestIDExtraFieldsAndBodyInOrder() {
        #expect(
            Self.text(Self.error)
                == "HTTP/1.1 404 Not Found\r\nContent-Type: application/xml\r\nContent-Length: 8\r\n"
                + "Server: presignd\r\nx-amz-request-id: req-00002A\r\nx-presignd-request-id: req-00002A\r\n"
                + "x-amz-error-code: NoSuchBucket\r\n\r\n<Error/>")
    }

    @Test func answersHEADWithoutTheBodyButWithItsLength() {
        let text = Self.text(Self.error, answering: "HEAD")
        #expect(text.hasSuffix("x-amz-error-code: NoSuchBucket\r\n\r\n"))
        #expect(text.contains("Content-Length: 8\r\n"))
    }

    @Test func saysConnectionCloseOnlyWhenItCloses() {
        var closing = Self.error
        closing.closesConnection = true
        #expect(Self.text(closing).hasSuffix("x-amz-error-code: NoSuchBucket\r\nConnection: close\r\n\r\n<Error/>"))
        #expect(!Self.text(Self.error).contains("Connection:"))
    }

    @Test func sendsNoRequestIDFieldsWithoutARequestID() {
        let text = Self.text(LocalResponse(status: 200, contentType: "text/plain", body: Array("ok\n".utf8)))
        #expect(
            text == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nServer: presignd\r\n\r\nok\n")
    }

    @Test(arguments: [100, 204, 304])
    func sendsNoContentFieldsOrBodyForAStatusWithoutContent(status: Int) {
        let response = LocalResponse(
            status: status, contentType: "application/json", body: Array("{}\n".utf8), headers: [("Allow", "POST")])
        let text = Self.text(response)
        #expect(!text.contains("Content-Type") && !text.contains("Content-Length"))
        #expect(text.hasSuffix("Server: presignd\r\nAllow: POST\r\n\r\n"))
    }

    @Test(arguments: ["GET", "HEAD"])
    func decodesAsOneCompleteResponseWithTheSameFields(method: String) throws {
        var closing = Self.error
        closing.closesConnection = true
        let transcript = decodeResponses(Self.text(closing, answering: method), methods: [method])
        #expect(transcript.error == nil)
        let message = try #require(transcript.messages.first)
        #expect(transcript.messages.count == 1 && message.isComplete && !message.isKeepAlive)
        #expect(message.head.status == 404 && message.head.headers["x-presignd-request-id"] == "req-00002A")
        #expect(message.bodyText == (method == "HEAD" ? "" : "<Error/>"))
    }

    @Test func interimContinueIsAComplete100Head() {
        let text = String(decoding: LocalResponse.interimContinue, as: UTF8.self)
        #expect(text == "HTTP/1.1 100 Continue\r\n\r\n")
        #expect(decodeResponses(text).messages.first?.head.isInterim == true)
    }
}
