/// The keys a DeleteObjects (`POST /bucket?delete`) body names, read strictly: S3 deletes every `<Key>` in it,
/// so anything presignd cannot read with certainty (comments, CDATA, a DOCTYPE, namespaced or unknown elements)
/// is refused rather than guessed at.
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
        var keys: [String] = []
        var stack: [String] = []
        var text: [UInt8] = []
        var index = 0
        let lt = UInt8(ascii: "<")
        let gt = UInt8(ascii: ">")
        while index < body.count {
            guard body[index] == lt else {
                text.append(body[index])
                index += 1
                continue
            }
            guard let close = body[index...].firstIndex(of: gt) else { throw malformed("an unterminated tag") }
            let tag = body[(index + 1)..<close]
            index = close + 1
            if tag.first == UInt8(ascii: "?") {
                // Only the XML declaration, and only first.
                guard keys.isEmpty && stack.isEmpty && tag.starts(with: "?xml ".utf8) else {
                    throw malformed("a processing instruction")
                }
                continue
            }
            if tag.first == UInt8(ascii: "!") { throw malformed("comments, CDATA and DOCTYPE are refused") }
            let isEnd = tag.first == UInt8(ascii: "/")
            let isEmpty = tag.last == UInt8(ascii: "/")
            let inner = tag.dropFirst(isEnd ? 1 : 0).dropLast(isEmpty ? 1 : 0)
            let nameEnd = inner.firstIndex(where: { $0 == UInt8(ascii: " ") || $0 == 9 || $0 == 10 || $0 == 13 })
            let name = String(decoding: inner[..<(nameEnd ?? inner.endIndex)], as: UTF8.self)
            guard elements.contains(name) else { throw malformed("element <\(name)> is not part of DeleteObjects") }
            if nameEnd != nil && (isEnd || name != "Delete") {
                throw malformed("attributes are allowed on <Delete> only")
            }
            if isEnd {
                guard stack.last == name else { throw malformed("mismatched </\(name)>") }
                stack.removeLast()
                if name == "Key" {
                    guard stack.last == "Object" else { throw malformed("<Key> outside <Object>") }
                    keys.append(try decodeText(text))
                    guard keys.count <= maximumKeys else { throw malformed("more than \(maximumKeys) keys") }
                }
            } else if !isEmpty {
                if stack.isEmpty != (name == "Delete") { throw malformed("the root element must be <Delete>") }
                if name == "Key" && stack.last != "Object" { throw malformed("<Key> outside <Object>") }
                stack.append(name)
            } else if name == "Key" {
                throw malformed("an empty <Key/>")
            }
            text.removeAll(keepingCapacity: true)
        }
        guard stack.isEmpty else { throw malformed("the document ends inside <\(stack.last ?? "")>") }
        guard !keys.isEmpty else { throw malformed("no <Key> in the body") }
        return keys
    }

    /// Element text with XML's five entities and character references decoded.
    static func decodeText(_ text: [UInt8]) throws(PolicyDenial) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            guard text[index] == UInt8(ascii: "&") else {
                out.append(text[index])
                index += 1
                continue
            }
            guard let end = text[index...].firstIndex(of: UInt8(ascii: ";")), end - index <= 10 else {
                throw malformed("an unterminated entity")
            }
            let entity = String(decoding: text[(index + 1)..<end], as: UTF8.self)
            index = end + 1
            switch entity {
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "amp": out.append(UInt8(ascii: "&"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                let isHex = entity.hasPrefix("#x")
                guard entity.hasPrefix("#"),
                    let value = UInt32(entity.dropFirst(isHex ? 2 : 1), radix: isHex ? 16 : 10),
                    let scalar = Unicode.Scalar(value)
                else { throw malformed("unknown entity &\(entity);") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
        }
        guard let key = String(validating: out, as: UTF8.self) else { throw malformed("a key is not UTF-8") }
        return key
    }

    public static func malformed(_ detail: String) -> PolicyDenial {
        PolicyDenial(.malformedDeleteBody, rule: "DeleteObjects body", "the DeleteObjects body is refused: \(detail)")
    }
}
