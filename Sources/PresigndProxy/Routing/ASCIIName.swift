import PresigndHTTP1

/// Allocation-free ASCII helpers for header names on the hot path (names are RFC 9110 tokens:
/// ASCII; `String.lowercased()` is Unicode-aware and allocates).
enum ASCIIName {
    /// Case-insensitive ASCII equality with an already lower-case name.
    static func equals(_ name: String, lowercase: StaticString) -> Bool {
        equals(name.utf8, lowercase: lowercase)
    }

    static func equals(_ name: some Collection<UInt8>, lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        guard name.count == count else { return false }
        var index = 0
        let expected = lowercase.utf8Start
        for byte in name {
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != expected[index] { return false }
            index += 1
        }
        return true
    }

    static func isHopByHopResponseHeader(_ name: String) -> Bool {
        isHopByHopResponseHeader(name.utf8)
    }

    /// Hop-by-hop response fields presignd never forwards to its client (`ResponseHead.isHopByHopField`).
    static func isHopByHopResponseHeader(_ name: some Collection<UInt8>) -> Bool {
        ResponseHead.isHopByHopField(name)
    }
}
