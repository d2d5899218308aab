/// An IPv4 or IPv6 address as network-order bytes, parsed without `inet_pton` so the module stays pure.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public var bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    /// Parses dotted-quad IPv4 (`"10.0.0.1"`) or IPv6 (`"::1"`, `"fe80::1"`, `"::ffff:10.0.0.1"`); no zone ids.
    public init?(_ text: String) {
        if let v4 = Self.parseIPv4(Substring(text)) {
            bytes = v4
        } else if let v6 = Self.parseIPv6(text) {
            bytes = v6
        } else {
            return nil
        }
    }

    /// IPv4 127.0.0.0/8, IPv6 `::1`, and IPv4-mapped loopback.
    public var isLoopback: Bool {
        if isIPv4 { return bytes[0] == 127 }
        if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }
        return bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) && bytes[12] == 127
    }

    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var result: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part.count == 1 || part.first != "0", let value = UInt8(part)
            else { return nil }
            result.append(value)
        }
        return result
    }

    static func parseIPv6(_ text: String) -> [UInt8]? {
        var halves = [text]
        if let gap = text.firstRange(of: "::") {
            halves = [String(text[..<gap.lowerBound]), String(text[gap.upperBound...])]
            guard halves[1].firstRange(of: "::") == nil else { return nil }
        }
        func groups(_ part: String, allowIPv4Tail: Bool) -> [UInt8]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt8] = []
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            for (offset, field) in fields.enumerated() {
                if allowIPv4Tail, offset == fields.count - 1, field.contains("."), let v4 = parseIPv4(field) {
                    result += v4
                    continue
                }
                guard (1...4).contains(field.count), let value = UInt16(field, radix: 16) else { return nil }
                result += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return result
        }
        guard let head = groups(halves[0], allowIPv4Tail: halves.count == 1) else { return nil }
        if halves.count == 1 { return head.count == 16 ? head : nil }
        guard let tail = groups(halves[1], allowIPv4Tail: true), head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// Dotted quad, or IPv6 with the longest run of zero groups compressed (RFC 5952).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 16, by: 2).map { Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]) }
        var best = (start: -1, length: 0)
        var run = (start: -1, length: 0)
        for (index, group) in groups.enumerated() {
            if group == 0 {
                run = run.start < 0 ? (index, 1) : (run.start, run.length + 1)
                if run.length > best.length { best = run }
            } else {
                run = (-1, 0)
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.length >= 2 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}
