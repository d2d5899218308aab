extension HTTPHeaders {
    /// The comma-separated elements of every field named `name` (RFC 9110 §5.6.1) as bytes, OWS trimmed, empty
    /// elements kept so that strict callers can reject them.
    func listElements(_ name: String) -> [Substring.UTF8View] {
        var elements: [Substring.UTF8View] = []
        for value in values(name) {
            for element in value.utf8.split(separator: ASCII.comma, omittingEmptySubsequences: false) {
                elements.append(element.trimmingOWS())
            }
        }
        return elements
    }

    /// Whether a list field such as Connection names `token` (case-insensitive, RFC 9110 §7.6.1).
    func listContains(_ name: String, token: StaticString) -> Bool {
        for (fieldName, value) in self where ASCII.equalsIgnoringCase(fieldName, name) {
            var value = value
            if value.withUTF8({ Self.listContains($0, token: token) }) { return true }
        }
        return false
    }

    /// Whether the `Connection` list value `bytes` names a field that is not hop-by-hop already (nor `close`):
    /// a field a proxy would otherwise forward, and must not (RFC 9110 §7.6.1).
    static func listNamesForwardedField(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        firstListElement(bytes) { element in
            !element.isEmpty && !ASCII.equalsLowercase(element, "close") && !ResponseHead.isHopByHopField(element)
        }
    }

    /// Whether the list value `bytes` (comma-separated, OWS around elements) names `token`, ignoring case.
    /// Runs for every message (keep-alive): no arrays, one pass over the bytes.
    static func listContains(_ bytes: UnsafeBufferPointer<UInt8>, token: StaticString) -> Bool {
        firstListElement(bytes) { ASCII.equalsLowercase($0, token) }
    }

    /// Whether an element of the list value `bytes` (split at commas, OWS trimmed) satisfies `matches`.
    private static func firstListElement(
        _ bytes: UnsafeBufferPointer<UInt8>, where matches: (UnsafeBufferPointer<UInt8>) -> Bool
    ) -> Bool {
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != ASCII.comma { end += 1 }
            var low = start
            var high = end
            while low < high, ASCII.isWhitespace(bytes[low]) { low += 1 }
            while high > low, ASCII.isWhitespace(bytes[high - 1]) { high -= 1 }
            if matches(UnsafeBufferPointer(rebasing: bytes[low..<high])) { return true }
            start = end + 1
        }
        return false
    }
}

extension Substring.UTF8View {
    /// Drops leading and trailing SP / HTAB.
    func trimmingOWS() -> Substring.UTF8View {
        var s = self
        while let first = s.first, ASCII.isWhitespace(first) { s = s.dropFirst() }
        while let last = s.last, ASCII.isWhitespace(last) { s = s.dropLast() }
        return s
    }
}
