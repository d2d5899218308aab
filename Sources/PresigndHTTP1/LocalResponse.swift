/// A complete response that presignd writes itself instead of relaying one (S3 XML errors, redirects, the bucket
/// list, the admin listener's answers). One encoder for all of them, so each has the same framing (a
/// `Content-Length`, never chunked) and the same identifying fields.
///
/// Like `HTTPEncoder`, it trusts its input: no CR, LF or NUL in the content type, the request id or any field.
public struct LocalResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Sent as `x-amz-request-id` (the field S3 SDKs report) and as `x-presignd-request-id`; nil sends neither.
    public var requestID: String?
    /// Fields sent after the fixed ones, in this order (`Location`, `Cache-Control`, CORS fields, …).
    public var headers: [(name: String, value: String)]
    /// Adds `Connection: close` (RFC 9112 §9.6): the connection closes once this response is sent.
    public var closesConnection: Bool

    public init(
        status: Int, contentType: String, body: [UInt8] = [], requestID: String? = nil,
        headers: [(name: String, value: String)] = [], closesConnection: Bool = false
    ) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.requestID = requestID
        self.headers = headers
        self.closesConnection = closesConnection
    }

    /// `HTTP/1.1 100 Continue` and the empty line: the interim answer to `Expect: 100-continue` (RFC 9110
    /// §10.1.1), which presignd sends itself (R2 never does, DESIGN §2).
    public static let interimContinue: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Whether a status is sent without content: 1xx, 204 and 304 (RFC 9110 §15.2, §15.3.5, §15.4.5).
    static func hasNoContent(_ status: Int) -> Bool {
        (100..<200).contains(status) || status == 204 || status == 304
    }

    /// Appends the status line, `Content-Type`, `Content-Length`, `Server`, the request id fields, `headers`,
    /// `Connection: close` when asked, the empty line, and the body.
    ///
    /// An answer to HEAD has no body but the `Content-Length` a GET would have had (RFC 9110 §9.3.2, §8.6). A
    /// status without content (1xx, 204, 304) has no `Content-Type`, no `Content-Length` (§8.6: a 204 must not
    /// send one) and no body, whatever `body` holds.
    public func encode(answering requestMethod: String, into buffer: inout [UInt8]) {
        let hasContent = !Self.hasNoContent(status)
        buffer.reserveCapacity(buffer.count + 256 + (hasContent ? body.count : 0))
        HTTPEncoder.append("HTTP/1.1", into: &buffer)
        HTTPEncoder.appendStatusAndReason(status, HTTPEncoder.reasonPhrase(for: status), into: &buffer)
        if hasContent {
            HTTPEncoder.appendField("Content-Type", contentType, into: &buffer)
            HTTPEncoder.appendField("Content-Length", String(body.count), into: &buffer)
        }
        HTTPEncoder.append("Server: presignd\r\n", into: &buffer)
        if let requestID {
            HTTPEncoder.appendField("x-amz-request-id", requestID, into: &buffer)
            HTTPEncoder.appendField("x-presignd-request-id", requestID, into: &buffer)
        }
        for field in headers { HTTPEncoder.appendField(field.name, field.value, into: &buffer) }
        if closesConnection { HTTPEncoder.append("Connection: close\r\n", into: &buffer) }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
        if hasContent && requestMethod != "HEAD" { buffer.append(contentsOf: body) }
    }

    /// `encode(answering:into:)` into a new buffer.
    public func encoded(answering requestMethod: String) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(answering: requestMethod, into: &bytes)
        return bytes
    }
}
