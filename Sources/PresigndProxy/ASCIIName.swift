#if canImport(Glibc)
    import Glibc
#endif

/// Allocation-free ASCII helpers for header names on the hot path (names are RFC 9110 tokens:
/// ASCII; `String.lowercased()` is Unicode-aware and allocates).
enum ASCIIName {
    /// Lower-cases ASCII letters; returns the same string (no allocation) when already lower case.
    static func lowercased(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return name }
        // Written in place: short names become small strings with no heap allocation.
        return String(unsafeUninitializedCapacity: name.utf8.count) { buffer in
            var index = 0
            for byte in name.utf8 {
                buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                index += 1
            }
            return index
        }
    }

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

    /// Hop-by-hop response fields (RFC 9110 §7.6.1) presignd never forwards to its client.
    static func isHopByHopResponseHeader(_ name: some Collection<UInt8>) -> Bool {
        switch name.count {
        case 2: return equals(name, lowercase: "te")
        case 7: return equals(name, lowercase: "trailer") || equals(name, lowercase: "upgrade")
        case 10: return equals(name, lowercase: "connection") || equals(name, lowercase: "keep-alive")
        case 16: return equals(name, lowercase: "proxy-connection")
        case 17: return equals(name, lowercase: "transfer-encoding")
        case 18: return equals(name, lowercase: "proxy-authenticate")
        default: return false
        }
    }

    /// Appends raw field lines (`ResponseHead.rawFields`: validated, CRLF-terminated) except the
    /// hop-by-hop ones, as received: consecutive kept lines go in one append.
    static func appendEndToEndFields(_ raw: [UInt8], to output: inout [UInt8]) {
        raw.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            var keptFrom = 0
            var lineStart = 0
            while lineStart < bytes.count {
                var colon = lineStart
                while colon < bytes.count, bytes[colon] != UInt8(ascii: ":") { colon += 1 }
                // Validated lines hold no bare LF: the line's LF is the first one after its name.
                let lineEnd: Int
                if let lf = memchr(base + colon, 0x0A, bytes.count - colon) {
                    lineEnd = UnsafeRawPointer(lf) - UnsafeRawPointer(base) + 1
                } else {
                    lineEnd = bytes.count
                }
                if isHopByHopResponseHeader(UnsafeBufferPointer(rebasing: bytes[lineStart..<colon])) {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[keptFrom..<lineStart]))
                    keptFrom = lineEnd
                }
                lineStart = lineEnd
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[keptFrom...]))
        }
    }
}
