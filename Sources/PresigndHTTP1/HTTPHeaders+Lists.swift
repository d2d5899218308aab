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
        // Runs for every message (keep-alive): no arrays, one pass over each matching value.
        for (fieldName, value) in self where ASCII.equalsIgnoringCase(fieldName, name) {
            let utf8 = value.utf8
            var start = utf8.startIndex
            while start < utf8.endIndex {
                let end = utf8[start...].firstIndex(of: ASCII.comma) ?? utf8.endIndex
                if ASCII.equalsLowercase(utf8[start..<end].trimmingOWS(), token) { return true }
                start = end == utf8.endIndex ? end : utf8.index(after: end)
            }
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
