/// Allocation-free ASCII helpers for header names on the hot path (names are RFC 9110 tokens:
/// ASCII; `String.lowercased()` is Unicode-aware and allocates).
enum ASCIIName {
    /// Lower-cases ASCII letters; returns the same string (no allocation) when already lower case.
    static func lowercased(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return name }
        return String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Case-insensitive ASCII equality with an already lower-case name.
    static func equals(_ name: String, lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard name.utf8.count == count else { return false }
        var index = 0
        let expected = lowercase.utf8Start
        for byte in name.utf8 {
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != expected[index] { return false }
            index += 1
        }
        return true
    }

    /// Whether a response header describes one hop only (RFC 9110 §7.6.1); presignd frames its own.
    static func isHopByHopResponseHeader(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2: return equals(name, lowercase: "te")
        case 7: return equals(name, lowercase: "trailer") || equals(name, lowercase: "upgrade")
        case 10: return equals(name, lowercase: "connection") || equals(name, lowercase: "keep-alive")
        case 16: return equals(name, lowercase: "proxy-connection")
        case 17: return equals(name, lowercase: "transfer-encoding")
        case 18: return equals(name, lowercase: "proxy-authenticate")
        default: return false
        }
    }
}
