/// The header-field rules that decide how a message body is delimited (RFC 9112 §6) and whether the connection
/// persists (RFC 9112 §9.3). Shared by the request and response decoders.
enum MessageFraming {
    /// Framing from Content-Length and Transfer-Encoding (RFC 9112 §6.3 (3)-(6)), or nil when neither is present.
    ///
    /// Refuses both together, any transfer coding other than exactly `chunked`, Transfer-Encoding in HTTP/1.0, and
    /// Content-Length values that are not 1*DIGIT, overflow, or differ. Identical repeated values (`5` and `5`, or
    /// `5, 5`) are accepted as RFC 9110 §8.6 allows, and collapsed into a single field in `headers`.
    static func bodyFraming(_ headers: inout HTTPHeaders, version: HTTPVersion) throws(HTTPParseError)
        -> BodyFraming?
    {
        // One pass over the fields for both names (this runs for every message).
        var transferEncodings = 0
        var contentLengths = 0
        var lastContentLength = ""
        for (name, value) in headers {
            switch name.utf8.count {
            case 14 where ASCII.equalsIgnoringCase(name, "Content-Length"):
                contentLengths += 1
                lastContentLength = value
            case 17 where ASCII.equalsIgnoringCase(name, "Transfer-Encoding"):
                transferEncodings += 1
            default:
                break
            }
        }
        let hasTransferEncoding = transferEncodings > 0
        let hasContentLength = contentLengths > 0
        if hasTransferEncoding {
            guard !hasContentLength else { throw .contentLengthAndTransferEncoding }
            guard version != .http1_0 else { throw .transferEncodingInHTTP10 }  // RFC 9112 §6.1
            let codings = headers.listElements("Transfer-Encoding")
            guard codings.count == 1, ASCII.equalsLowercase(codings[0], "chunked") else {
                throw .unsupportedTransferEncoding
            }
            return .chunked
        }
        guard hasContentLength else { return nil }
        // Fast path: one field holding one plain number (nearly every message), no list splitting.
        if contentLengths == 1, let length = plainDecimal(lastContentLength) {
            return .contentLength(length)
        }
        var length: Int?
        var fieldCount = 0
        for element in headers.listElements("Content-Length") {
            fieldCount += 1
            let value = try decimal(element)
            if let length, length != value { throw .conflictingContentLength }
            length = value
        }
        guard let length else { throw .invalidContentLength }
        if fieldCount > 1 {
            headers.replaceOrAdd(name: "Content-Length", value: String(length))
        }
        return .contentLength(length)
    }

    /// A value that is nothing but 1 to 18 digits (no list, no whitespace: the field parser trimmed OWS),
    /// or nil for anything else, which the full rules then decide.
    static func plainDecimal(_ value: String) -> Int? {
        var value = value
        return value.withUTF8 { plainDecimal($0) }
    }

    static func plainDecimal(_ value: UnsafeBufferPointer<UInt8>) -> Int? {
        var result = 0
        var digits = 0
        for byte in value {
            guard ASCII.isDigit(byte), digits < 18 else { return nil }
            result = result * 10 + Int(byte &- UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? result : nil
    }

    /// `Content-Length = 1*DIGIT` (RFC 9110 §8.6), without sign, hex or overflow.
    static func decimal(_ bytes: Substring.UTF8View) throws(HTTPParseError) -> Int {
        guard !bytes.isEmpty else { throw .invalidContentLength }
        var value = 0
        for byte in bytes {
            guard ASCII.isDigit(byte) else { throw .invalidContentLength }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
            guard !o1, !o2 else { throw .invalidContentLength }
            value = sum
        }
        return value
    }

    /// RFC 9112 §9.3: `close` ends the connection; HTTP/1.1 persists by default; HTTP/1.0 only with `keep-alive`.
    static func isKeepAlive(_ headers: HTTPHeaders, version: HTTPVersion) -> Bool {
        if headers.listContains("Connection", token: "close") { return false }
        if version == .http1_0 { return headers.listContains("Connection", token: "keep-alive") }
        return true
    }
}
