/// Writes heads and chunk framing as bytes (RFC 9112 §2.1, §3, §4, §7.1).
///
/// The encoder trusts its input: heads from the decoders are valid by construction; a caller building fields
/// from other sources must not put CR, LF or NUL in names or values (that would split the message).
public enum HTTPEncoder {
    /// CRLF after each chunk's data (RFC 9112 §7.1).
    public static let chunkTerminator: [UInt8] = [ASCII.cr, ASCII.lf]
    /// The last chunk and an empty trailer section: `0\r\n\r\n` (RFC 9112 §7.1).
    public static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    /// Appends `method SP request-target SP HTTP-version CRLF`, the fields and the empty line.
    public static func encode(_ head: RequestHead, into buffer: inout [UInt8]) {
        appendUTF8(head.method, into: &buffer)
        buffer.append(ASCII.space)
        appendUTF8(head.target, into: &buffer)
        buffer.append(ASCII.space)
        appendVersion(head.version, into: &buffer)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
        appendFields(head.headers, into: &buffer)
    }

    /// Appends `HTTP-version SP status-code SP reason-phrase CRLF`, the fields and the empty line.
    public static func encode(_ head: ResponseHead, into buffer: inout [UInt8]) {
        appendVersion(head.version, into: &buffer)
        appendStatusAndReason(head.status, head.reason, into: &buffer)
        appendFields(head.headers, into: &buffer)
    }

    /// Appends ` status-code SP reason-phrase CRLF` (the rest of a status line after the version).
    public static func appendStatusAndReason(_ status: Int, _ reason: String, into buffer: inout [UInt8]) {
        buffer.append(ASCII.space)
        let status = min(max(status, 0), 999)
        buffer.append(UInt8(ascii: "0") + UInt8(status / 100))
        buffer.append(UInt8(ascii: "0") + UInt8(status / 10 % 10))
        buffer.append(UInt8(ascii: "0") + UInt8(status % 10))
        buffer.append(ASCII.space)
        appendUTF8(reason, into: &buffer)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Appends one field line, `name: value CRLF` (RFC 9112 §5).
    @inline(__always)
    public static func appendField(_ name: String, _ value: String, into buffer: inout [UInt8]) {
        appendUTF8(name, into: &buffer)
        buffer.append(ASCII.colon)
        buffer.append(ASCII.space)
        appendUTF8(value, into: &buffer)
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    /// Appends a literal's bytes (a `String` literal's `.utf8` would go through the generic append).
    @inline(__always)
    public static func append(_ literal: StaticString, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends a string's UTF-8 bytes: one copy from its contiguous storage (native strings, small
    /// ones included), the generic element walk only for bridged ones.
    @inline(__always)
    public static func appendUTF8(_ text: String, into buffer: inout [UInt8]) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { buffer.append(contentsOf: $0) }
        if copied == nil { buffer.append(contentsOf: text.utf8) }
    }

    /// Appends a chunk-size line, `hex(size) CRLF`, lowercase and without leading zeros (RFC 9112 §7.1).
    public static func chunkHeader(size: Int, into buffer: inout [UInt8]) {
        precondition(size >= 0, "chunk size must not be negative")
        var shift = (Int.bitWidth - size.leadingZeroBitCount + 3) / 4 * 4 - 4
        if shift < 0 { shift = 0 }
        while shift >= 0 {
            let nibble = UInt8(truncatingIfNeeded: size >> shift) & 0xF
            buffer.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
            shift -= 4
        }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }

    private static func appendVersion(_ version: HTTPVersion, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: "HTTP/".utf8)
        buffer.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: version.major % 10))
        buffer.append(UInt8(ascii: "."))
        buffer.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: version.minor % 10))
    }

    /// Each field as `name: value CRLF`, then the empty line (RFC 9112 §5).
    private static func appendFields(_ headers: HTTPHeaders, into buffer: inout [UInt8]) {
        for field in headers { appendField(field.name, field.value, into: &buffer) }
        buffer.append(ASCII.cr)
        buffer.append(ASCII.lf)
    }
}
