/// Parses `status-line = HTTP-version SP status-code SP [ reason-phrase ]` (RFC 9112 §4).
///
/// Strict on the version and the three-digit code (100...599); lenient on one point: a status line that ends right
/// after the code, without the SP before an empty reason, is accepted (the reason is ignored by clients anyway).
enum StatusLineParser {
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError)
        -> (version: HTTPVersion, status: Int, reason: String)
    {
        guard line.count >= 12, line[8] == ASCII.space, line.count == 12 || line[12] == ASCII.space else {
            throw .invalidStatusLine
        }
        let version = try HTTPVersion.parse(UnsafeBufferPointer(rebasing: line[..<8]), malformed: .invalidStatusLine)
        var status = 0
        for byte in line[9..<12] {
            guard ASCII.isDigit(byte) else { throw .invalidStatusLine }
            status = status * 10 + Int(byte &- UInt8(ascii: "0"))
        }
        guard (100...599).contains(status) else { throw .invalidStatusLine }
        let reasonStart = min(13, line.count)
        // reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ); obs-text must be UTF-8 as in field values.
        var highBits: UInt8 = 0
        for byte in line[reasonStart...] {
            if byte < 0x80 && !(ASCII.isVisible(byte) || ASCII.isWhitespace(byte)) { throw .invalidStatusLine }
            highBits |= byte
        }
        let reasonBytes = UnsafeBufferPointer(rebasing: line[reasonStart...])
        // ASCII (nearly every reason phrase) needs no UTF-8 validation.
        let reason: String
        if highBits < 0x80 {
            reason = ASCII.internedString(reasonBytes, 0..<reasonBytes.count)
        } else {
            guard let validated = String(validating: reasonBytes, as: UTF8.self) else { throw .invalidStatusLine }
            reason = validated
        }
        return (version, status, reason)
    }
}
