#if canImport(Glibc)
    import Glibc
#endif

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
        // Insertion sort: a request has a handful of headers, mostly arriving nearly sorted, and a
        // stable sort keeps repeated names in arrival order (§4.1).
        var index = 1
        while index < entries.count {
            let entry = entries[index]
            var slot = index
            while slot > 0 && Self.bytesLess(entry.name, entries[slot - 1].name) {
                entries[slot] = entries[slot - 1]
                slot -= 1
            }
            if slot != index { entries[slot] = entry }
            index += 1
        }
    }

    /// Appends `name:value\n` lines (repeated names joined with `,`) to `output`, and the `;`-joined names to
    /// `signedHeaders`. Call `sort()` first.
    /// Byte order of the UTF-8 forms (§4.1 sorts by bytes, not by Unicode collation).
    static func bytesLess(_ left: String, _ right: String) -> Bool {
        var left = left
        var right = right
        return left.withUTF8 { a in
            right.withUTF8 { b in
                let common = min(a.count, b.count)
                if common > 0, let pa = a.baseAddress, let pb = b.baseAddress {
                    let order = memcmp(pa, pb, common)
                    if order != 0 { return order < 0 }
                }
                return a.count < b.count
            }
        }
    }

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
