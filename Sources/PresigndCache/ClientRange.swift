/// What a client's `Range` field asks of an object of known size (RFC 9110 §14.1.2, §14.2).
public enum ClientRange: Sendable, Equatable {
    /// No `Range`, or one that must be ignored (another unit, bad syntax): the whole object, 200.
    case whole
    /// One satisfiable range, clamped to the object: 206 with `Content-Range`.
    case bytes(Range<Int>)
    /// No satisfiable range: 416 with `Content-Range: bytes */SIZE`.
    case unsatisfiable
    /// Several ranges (`multipart/byteranges`): not answered from the cache; the request goes upstream as is.
    case multiple

    /// Reads `field` (the `Range` value, or nil) against an object of `objectSize` bytes.
    public static func parse(_ field: String?, objectSize: Int) -> ClientRange {
        guard let field else { return .whole }
        let trimmed = field.drop { $0 == " " || $0 == "\t" }
        guard trimmed.count > 6, trimmed.prefix(6).lowercased() == "bytes=" else { return .whole }
        let specs = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(" \t")
        }
        let nonEmpty = specs.filter { !$0.isEmpty }
        guard !nonEmpty.isEmpty else { return .whole }
        var satisfiable: [Range<Int>] = []
        for spec in nonEmpty {
            guard let parsed = parseSpec(spec) else { return .whole }  // one bad spec: ignore the field
            if let range = parsed.resolved(objectSize: objectSize) { satisfiable.append(range) }
        }
        if nonEmpty.count > 1 { return satisfiable.isEmpty ? .unsatisfiable : .multiple }
        return satisfiable.first.map(ClientRange.bytes) ?? .unsatisfiable
    }

    /// `first-last`, `first-` or `-suffix`, digits only; nil when malformed or `last < first`.
    private static func parseSpec(_ spec: Substring) -> Spec? {
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit), first.count <= 18, last.count <= 18
        else { return nil }
        switch (Int(first), Int(last)) {
        case (let start?, let end?): return end >= start ? .closed(start, end) : nil
        case (let start?, nil): return last.isEmpty ? .from(start) : nil
        case (nil, let length?): return first.isEmpty ? .suffix(length) : nil
        case (nil, nil): return nil
        }
    }

    private enum Spec {
        case closed(Int, Int)
        case from(Int)
        case suffix(Int)

        /// The bytes it selects of an object, or nil when it selects none (RFC 9110 §14.1.2).
        func resolved(objectSize: Int) -> Range<Int>? {
            switch self {
            case .closed(let start, let end):
                return start < objectSize ? start..<(min(end, objectSize - 1) + 1) : nil
            case .from(let start):
                return start < objectSize ? start..<objectSize : nil
            case .suffix(let length):
                return length > 0 && objectSize > 0 ? max(0, objectSize - length)..<objectSize : nil
            }
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension Substring {
    /// Drops `characters` at both ends.
    func trimmingCharacters(_ characters: String) -> Substring {
        var result = self
        while let first = result.first, characters.contains(first) { result = result.dropFirst() }
        while let last = result.last, characters.contains(last) { result = result.dropLast() }
        return result
    }
}
