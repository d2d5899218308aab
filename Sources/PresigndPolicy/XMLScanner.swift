/// One piece of a small XML document, as `XMLScanner` reads it.
public enum XMLToken: Equatable, Sendable {
    /// `<Name …>` or, with `isEmpty`, `<Name …/>`; `hasAttributes` when anything follows the name inside the tag.
    case start(name: String, hasAttributes: Bool, isEmpty: Bool)
    /// `</Name>`.
    case end(name: String)
    /// Character data between two tags, with XML's five entities and character references decoded.
    case text(String)
}

/// Why a document was refused.
public struct XMLSyntaxError: Error, Equatable, Sendable {
    public var detail: String

    public init(_ detail: String) { self.detail = detail }
}

/// A strict tokenizer for the small XML documents presignd reads: DeleteObjects bodies (a client's, whose keys
/// must be read with certainty) and STS answers. What it cannot read with certainty is refused rather than
/// guessed at: comments, CDATA, DOCTYPE (and so entity definitions), processing instructions other than a leading
/// XML declaration, unknown entities, text that is not UTF-8. Nesting is left to the caller, which knows its
/// elements; attributes are reported, not parsed.
public enum XMLScanner {
    /// The tokens of `body`, in order; text that is only between tags is included (callers skip what they do
    /// not expect).
    public static func tokens(_ body: [UInt8]) throws(XMLSyntaxError) -> [XMLToken] {
        var tokens: [XMLToken] = []
        var text: [UInt8] = []
        var index = 0
        var sawElement = false
        let lt = UInt8(ascii: "<")
        let gt = UInt8(ascii: ">")
        while index < body.count {
            guard body[index] == lt else {
                text.append(body[index])
                index += 1
                continue
            }
            if !text.isEmpty {
                tokens.append(.text(try decodeText(text)))
                text.removeAll(keepingCapacity: true)
            }
            guard let close = body[index...].firstIndex(of: gt) else { throw XMLSyntaxError("an unterminated tag") }
            let tag = body[(index + 1)..<close]
            index = close + 1
            if tag.first == UInt8(ascii: "?") {
                // Only the XML declaration, and only before the first element.
                guard !sawElement && tag.starts(with: "?xml ".utf8) else {
                    throw XMLSyntaxError("a processing instruction")
                }
                continue
            }
            if tag.first == UInt8(ascii: "!") { throw XMLSyntaxError("comments, CDATA and DOCTYPE are refused") }
            let isEnd = tag.first == UInt8(ascii: "/")
            let isEmpty = tag.last == UInt8(ascii: "/")
            let inner = tag.dropFirst(isEnd ? 1 : 0).dropLast(isEmpty ? 1 : 0)
            let nameEnd = inner.firstIndex(where: { $0 == UInt8(ascii: " ") || $0 == 9 || $0 == 10 || $0 == 13 })
            let name = String(decoding: inner[..<(nameEnd ?? inner.endIndex)], as: UTF8.self)
            guard !name.isEmpty, !(isEnd && isEmpty) else { throw XMLSyntaxError("a malformed tag") }
            sawElement = true
            if isEnd {
                guard nameEnd == nil else { throw XMLSyntaxError("attributes on the end tag </\(name)>") }
                tokens.append(.end(name: name))
            } else {
                tokens.append(.start(name: name, hasAttributes: nameEnd != nil, isEmpty: isEmpty))
            }
        }
        if !text.isEmpty { tokens.append(.text(try decodeText(text))) }
        return tokens
    }

    /// Element text with XML's five entities and character references decoded.
    public static func decodeText(_ text: [UInt8]) throws(XMLSyntaxError) -> String {
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
                throw XMLSyntaxError("an unterminated entity")
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
                else { throw XMLSyntaxError("unknown entity &\(entity);") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
        }
        guard let decoded = String(validating: out, as: UTF8.self) else { throw XMLSyntaxError("text is not UTF-8") }
        return decoded
    }

    /// The text of each element reached by `path` (element names from the root), in document order: for an
    /// answer such as STS's `<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>`. Elements nested
    /// inside a matched element make it mixed content, which is refused.
    public static func texts(_ tokens: [XMLToken], at path: [String]) throws(XMLSyntaxError) -> [String] {
        var stack: [String] = []
        var found: [String] = []
        var current: String?
        var rootClosed = false
        for token in tokens {
            switch token {
            case .start(let name, _, let isEmpty):
                if current != nil { throw XMLSyntaxError("<\(name)> inside <\(stack.last ?? "")>") }
                if stack.isEmpty && rootClosed { throw XMLSyntaxError("a second root element <\(name)>") }
                stack.append(name)
                if stack == path { current = "" }
                if isEmpty {
                    if let value = current { found.append(value) }
                    current = nil
                    stack.removeLast()
                    rootClosed = rootClosed || stack.isEmpty
                }
            case .end(let name):
                guard stack.last == name else { throw XMLSyntaxError("mismatched </\(name)>") }
                if let value = current { found.append(value) }
                current = nil
                stack.removeLast()
                rootClosed = rootClosed || stack.isEmpty
            case .text(let value):
                current? += value
            }
        }
        guard stack.isEmpty else { throw XMLSyntaxError("the document ends inside <\(stack.last ?? "")>") }
        return found
    }
}
