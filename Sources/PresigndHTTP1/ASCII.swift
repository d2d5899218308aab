#if canImport(Glibc)
    import Glibc
#endif

/// The byte classes of RFC 9110 §5.6 and RFC 9112 §2 the codec checks, and the ASCII case fold every module
/// uses (ASCII+CaseFold.swift, public).
public enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let comma = UInt8(ascii: ",")

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b &- UInt8(ascii: "0") < 10 }

    @inline(__always) static func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) &- UInt8(ascii: "a") < 26 }

    /// SP / HTAB: optional whitespace (RFC 9110 §5.6.3).
    @inline(__always) static func isWhitespace(_ b: UInt8) -> Bool { b == space || b == tab }

    /// Visible ASCII, VCHAR (RFC 5234 B.1).
    @inline(__always) static func isVisible(_ b: UInt8) -> Bool { b &- 0x21 < 0x5E }

    /// tchar (RFC 9110 §5.6.2).
    @inline(__always) static func isTokenChar(_ b: UInt8) -> Bool {
        if isAlpha(b) || isDigit(b) { return true }
        switch b {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `isTokenChar` as two 64-bit masks, bytes 0–63 and 64–127 (the field-name loop's per-byte test):
    /// constants, where a table would be a lazily initialized global checked on every call.
    @inline(__always) static func isTokenByte(_ b: UInt8) -> Bool {
        let mask: UInt64 = b < 64 ? 0x03FF_6CFA_0000_0000 : (b < 128 ? 0x57FF_FFFF_C7FF_FFFE : 0)
        return (mask >> UInt64(b & 63)) & 1 != 0
    }

    /// Bytes allowed in a field value: VCHAR, SP, HTAB and obs-text (0x80–0xFF, checked as UTF-8 after).
    @inline(__always) static func isFieldValueByte(_ b: UInt8) -> Bool {
        b &- space < 0x5F || b >= 0x80 || b == tab
    }

    /// The value of a hex digit, or nil (RFC 5234 HEXDIG, either case).
    @inline(__always) static func hexValue(_ b: UInt8) -> Int? {
        if isDigit(b) { return Int(b &- UInt8(ascii: "0")) }
        let lower = b | 0x20
        if lower &- UInt8(ascii: "a") < 6 { return Int(lower &- UInt8(ascii: "a")) + 10 }
        return nil
    }

    /// Builds a String from bytes already validated as ASCII or UTF-8.
    @inline(__always) static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// `string`, but a literal when the bytes spell one of the words most heads carry (a method, a common field
    /// name or value, a reason phrase) exactly, case included: a literal is neither validated nor copied.
    @inline(__always) static func internedString(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        if let word = commonWord(slice) { return word }
        return String(decoding: slice, as: UTF8.self)
    }

    private static func commonWord(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        @inline(__always) func spells(_ literal: StaticString) -> Bool {
            guard let base = bytes.baseAddress else { return false }
            return memcmp(base, literal.utf8Start, bytes.count) == 0
        }
        switch bytes.count {
        case 2: return spells("OK") ? "OK" : nil
        case 3: return spells("GET") ? "GET" : spells("PUT") ? "PUT" : spells("*/*") ? "*/*" : nil
        case 4:
            if spells("Host") { return "Host" }
            if spells("HEAD") { return "HEAD" }
            return spells("Date") ? "Date" : spells("ETag") ? "ETag" : nil
        case 5: return spells("Range") ? "Range" : spells("close") ? "close" : nil
        case 6: return spells("Accept") ? "Accept" : spells("DELETE") ? "DELETE" : spells("Server") ? "Server" : nil
        case 10:
            if spells("User-Agent") { return "User-Agent" }
            return spells("Connection") ? "Connection" : spells("keep-alive") ? "keep-alive" : nil
        case 12: return spells("Content-Type") ? "Content-Type" : nil
        case 14: return spells("Content-Length") ? "Content-Length" : nil
        case 15: return spells("Partial Content") ? "Partial Content" : nil
        default: return nil
        }
    }
}
