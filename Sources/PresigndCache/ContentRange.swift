/// The framing of an answer from the cache: status, `Content-Length`, `Content-Range` (RFC 9110 §14.4), and the
/// upstream fields the store reads sizes from.
public struct ContentRange: Sendable, Equatable {
    /// 200, 206 or 416.
    public var status: Int
    /// The body's length (0 for 416).
    public var contentLength: Int
    /// `Content-Range`, for 206 and 416.
    public var contentRange: String?
    /// The object's bytes the body carries (empty for 416).
    public var bytes: Range<Int>

    /// The answer to `range` for an object of `objectSize` bytes; nil for `.multiple` (not served from the cache).
    public static func answer(_ range: ClientRange, objectSize: Int) -> ContentRange? {
        switch range {
        case .whole:
            return ContentRange(status: 200, contentLength: objectSize, contentRange: nil, bytes: 0..<objectSize)
        case .bytes(let bytes):
            return ContentRange(
                status: 206, contentLength: bytes.count,
                contentRange: "bytes \(bytes.lowerBound)-\(bytes.upperBound - 1)/\(objectSize)", bytes: bytes)
        case .unsatisfiable:
            return ContentRange(status: 416, contentLength: 0, contentRange: "bytes */\(objectSize)", bytes: 0..<0)
        case .multiple:
            return nil
        }
    }

    /// A `Content-Length` value: digits only.
    static func parseLength(_ text: String) -> Int? {
        var value = 0
        var digits = 0
        for byte in text.utf8 {  // bytes, not characters: a length is ASCII digits only
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10, digits < 18 else { return nil }
            value = value * 10 + Int(digit)
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// The range and complete length of an upstream 206's `bytes FIRST-LAST/SIZE`; nil for anything else.
    public static func parse(_ text: String) -> (bytes: Range<Int>, size: Int)? {
        guard text.hasPrefix("bytes "), let slash = text.firstIndex(of: "/") else { return nil }
        let span = text[text.index(text.startIndex, offsetBy: 6)..<slash].split(
            separator: "-", omittingEmptySubsequences: false)
        guard span.count == 2, let first = parseLength(String(span[0])), let last = parseLength(String(span[1])),
            let size = parseLength(String(text[text.index(after: slash)...])), first <= last, last < size
        else { return nil }
        return (first..<(last + 1), size)
    }

    /// The complete length of an upstream 206's `Content-Range`.
    static func parseCompleteLength(_ text: String) -> Int? { parse(text)?.size }
}
