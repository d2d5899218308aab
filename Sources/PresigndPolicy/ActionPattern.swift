import PresigndHTTP1

/// An IAM action name or pattern from `allowed_actions` / `denied_actions`: `s3:GetObject`, `s3:Get*`, `s3:*`.
/// IAM matches action names case-insensitively; `*` is any run of characters, `?` any one.
public struct ActionPattern: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    private let lowercased: [UInt8]

    /// Nil unless `text` is `s3:` followed by letters and wildcards.
    public init?(_ text: String) {
        guard text.utf8.count > 3, text.utf8.prefix(3).elementsEqual("s3:".utf8) else { return nil }
        guard text.dropFirst(3).allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "*" || $0 == "?") }) else {
            return nil
        }
        self.text = text
        self.lowercased = text.utf8.map(ASCII.lowercased)
    }

    public var description: String { text }

    /// Whether the pattern names `action`.
    public func matches(_ action: String) -> Bool {
        Self.glob(lowercased[...], action.utf8.map(ASCII.lowercased)[...])
    }

    /// The known actions (`OperationTable.actions`) the pattern names; empty means a typo.
    public var knownMatches: [String] { OperationTable.actions.filter(matches).sorted() }

    private static func glob(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var p = pattern.startIndex
        var t = text.startIndex
        var star: (p: Int, t: Int)? = nil
        while t < text.endIndex {
            if p < pattern.endIndex && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t]) {
                p += 1
                t += 1
            } else if p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") {
                star = (p, t)
                p += 1
            } else if let last = star {
                p = last.p + 1
                t = last.t + 1
                star = (last.p, last.t + 1)
            } else {
                return false
            }
        }
        while p < pattern.endIndex && pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }
}
