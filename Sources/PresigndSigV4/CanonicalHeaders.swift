/// The canonical headers block and the SignedHeaders list (SIGV4-S3-RULES §4.1).
struct CanonicalHeaders {
    /// One header to sign: its lower-case name, its value as sent, and its arrival position.
    struct Entry {
        var name: String
        var value: String
        var order: Int
    }

    var entries: [Entry] = []

    init(capacity: Int) {
        entries.reserveCapacity(capacity)
    }

    mutating func add(lowercasedName: String, value: String) {
        entries.append(Entry(name: lowercasedName, value: value, order: entries.count))
    }

    /// Sorts by name comparing bytes; equal names keep arrival order (§4.1: repeated values are not sorted).
    mutating func sort() {
        entries.sort { left, right in
            if left.name == right.name { return left.order < right.order }
            return left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
        }
    }

    /// Appends `name:value\n` lines (repeated names joined with `,`) to `output`, and the `;`-joined names to
    /// `signedHeaders`. Call `sort()` first.
    func append(to output: inout [UInt8], signedHeaders: inout [UInt8]) {
        var index = 0
        while index < entries.count {
            let name = entries[index].name
            if !signedHeaders.isEmpty { signedHeaders.append(UInt8(ascii: ";")) }
            signedHeaders.append(contentsOf: name.utf8)
            output.append(contentsOf: name.utf8)
            output.append(UInt8(ascii: ":"))
            Self.appendTrimmed(entries[index].value, to: &output)
            index += 1
            while index < entries.count, entries[index].name == name {
                output.append(UInt8(ascii: ","))  // §4.1: `a` and `b` give `a,b`, no space
                Self.appendTrimmed(entries[index].value, to: &output)
                index += 1
            }
            output.append(0x0A)
        }
    }

    /// §4.1 value: trim, collapse inner whitespace runs (space, tab, CR, LF from obs-fold) to one space;
    /// quotes do not protect spaces (`get-header-value-trim`).
    static func appendTrimmed(_ value: String, to output: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            // Copy whole runs of non-whitespace at once: most values have no run to collapse.
            var index = 0
            var needsSpace = false
            while index < bytes.count {
                while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
                guard index < bytes.count else { break }
                let start = index
                while index < bytes.count, !isWhitespace(bytes[index]) { index += 1 }
                if needsSpace { output.append(0x20) }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                needsSpace = true
            }
        }
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }
}
