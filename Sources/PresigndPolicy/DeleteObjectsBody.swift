/// The keys a DeleteObjects (`POST /bucket?delete`) body names, read strictly: S3 deletes every `<Key>` in it,
/// so anything presignd cannot read with certainty (comments, CDATA, a DOCTYPE: `XMLScanner`; namespaced or
/// unknown elements: here) is refused rather than guessed at.
public enum DeleteObjectsBody {
    /// S3's limit per request.
    public static let maximumKeys = 1000
    /// 1000 keys of S3's longest (1024 bytes), escaped, with their elements: more is not a DeleteObjects body.
    public static let maximumSize = 2 * 1024 * 1024

    static let elements: Set<String> = [
        "Delete", "Object", "Key", "VersionId", "Quiet", "ETag", "LastModifiedTime", "Size",
    ]

    /// The decoded keys, in order.
    public static func keys(_ body: [UInt8]) throws(PolicyDenial) -> [String] {
        guard body.count <= maximumSize else { throw malformed("the body is larger than \(maximumSize) bytes") }
        let tokens: [XMLToken]
        do {
            tokens = try XMLScanner.tokens(body)
        } catch {
            throw malformed(error.detail)
        }
        var keys: [String] = []
        var stack: [String] = []
        var text = ""
        for token in tokens {
            switch token {
            case .text(let value):
                text += value
                continue
            case .start(let name, let hasAttributes, let isEmpty):
                guard elements.contains(name) else { throw malformed("element <\(name)> is not part of DeleteObjects") }
                if hasAttributes && name != "Delete" { throw malformed("attributes are allowed on <Delete> only") }
                if isEmpty {
                    if name == "Key" { throw malformed("an empty <Key/>") }
                } else {
                    if stack.isEmpty != (name == "Delete") { throw malformed("the root element must be <Delete>") }
                    if name == "Key" && stack.last != "Object" { throw malformed("<Key> outside <Object>") }
                    stack.append(name)
                }
            case .end(let name):
                guard elements.contains(name) else { throw malformed("element <\(name)> is not part of DeleteObjects") }
                guard stack.last == name else { throw malformed("mismatched </\(name)>") }
                stack.removeLast()
                if name == "Key" {
                    guard stack.last == "Object" else { throw malformed("<Key> outside <Object>") }
                    keys.append(text)
                    guard keys.count <= maximumKeys else { throw malformed("more than \(maximumKeys) keys") }
                }
            }
            text = ""
        }
        guard stack.isEmpty else { throw malformed("the document ends inside <\(stack.last ?? "")>") }
        guard !keys.isEmpty else { throw malformed("no <Key> in the body") }
        return keys
    }

    public static func malformed(_ detail: String) -> PolicyDenial {
        PolicyDenial(.malformedDeleteBody, rule: "DeleteObjects body", "the DeleteObjects body is refused: \(detail)")
    }
}
