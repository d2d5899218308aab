/// The canonical headers block and the SignedHeaders list (SIGV4-S3-RULES §4.1), built on byte buffers.
///
/// Lower-case names live back to back in `names` and entries refer to them by range, so a signer that keeps one
/// `CanonicalHeaders` (in its `SigningScratch`) adds, sorts and writes headers without allocating. `names` is a
/// `ByteWriter`: call `deallocate()` when done with a local one.
struct CanonicalHeaders {
    /// Where a signed value comes from: a header of the request by index, or one of the signer's own values
    /// (`own.0`, `own.1`, `own.2` of `appendBlock`).
    enum Value {
        case header(Int)
        case own(Int)
    }

    /// One header to sign: its lower-case name in `names`, and its value.
    struct Entry {
        var name: Range<Int>
        var value: Value
    }

    /// Lower-case names, back to back (the signer also keeps names it does not sign here).
    var names = ByteWriter()
    var entries: [Entry] = []

    mutating func removeAll() {
        names.removeAll()
        entries.removeAll(keepingCapacity: true)
    }

    mutating func deallocate() {
        names.deallocate()
        entries = []
    }

    /// The lower-case name at `range` of `names`; valid until the next name is added.
    func name(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        names[range]
    }

    /// Lower-cases `name` into `names` and returns its range there.
    mutating func appendName(_ name: String) -> Range<Int> {
        let start = names.count
        ASCIIBytes.withBytes(name) { ASCIIBytes.appendLowercased($0, to: &names) }
        return start..<names.count
    }

    /// Adds a header to sign whose lower-case name is already in `names`.
    mutating func add(name: Range<Int>, value: Value) {
        entries.append(Entry(name: name, value: value))
    }

    /// Adds a header to sign under a lower-case literal name.
    mutating func add(lowercasedName: StaticString, value: Value) {
        let start = names.count
        names.append(literal: lowercasedName)
        entries.append(Entry(name: start..<names.count, value: value))
    }

    /// Sorts by name comparing bytes; equal names keep arrival order (§4.1: repeated values are not sorted).
    mutating func sort() {
        // Insertion sort: a request has a handful of headers, mostly arriving nearly sorted, and a
        // stable sort keeps repeated names in arrival order (§4.1).
        var index = 1
        while index < entries.count {
            let entry = entries[index]
            let name = names[entry.name]
            var slot = index
            while slot > 0, ASCIIBytes.less(name, names[entries[slot - 1].name]) {
                entries[slot] = entries[slot - 1]
                slot -= 1
            }
            if slot != index { entries[slot] = entry }
            index += 1
        }
    }

    /// Appends the `name:value\n` lines (repeated names joined with `,`) to `output`. Call `sort()` first.
    func appendBlock(
        to output: inout some ByteSink, headers: [(name: String, value: String)], own: (String, String, String)
    ) {
        var index = 0
        while index < entries.count {
            let name = names[entries[index].name]
            output.append(bytes: name)
            output.append(UInt8(ascii: ":"))
            Self.appendTrimmed(value(entries[index].value, headers, own), to: &output)
            index += 1
            while index < entries.count, ASCIIBytes.equal(name, names[entries[index].name]) {
                output.append(UInt8(ascii: ","))  // §4.1: `a` and `b` give `a,b`, no space
                Self.appendTrimmed(value(entries[index].value, headers, own), to: &output)
                index += 1
            }
            output.append(0x0A)
        }
    }

    /// Appends SignedHeaders: the distinct names, sorted, joined by `;`. Call `sort()` first.
    func appendSignedHeaders(to output: inout some ByteSink) {
        var previous: UnsafeBufferPointer<UInt8>?
        for entry in entries {
            let name = names[entry.name]
            if let previous {
                if ASCIIBytes.equal(previous, name) { continue }
                output.append(UInt8(ascii: ";"))
            }
            output.append(bytes: name)
            previous = name
        }
    }

    @inline(__always)
    private func value(_ value: Value, _ headers: [(name: String, value: String)], _ own: (String, String, String))
        -> String
    {
        switch value {
        case .header(let index): headers[index].value
        case .own(0): own.0
        case .own(1): own.1
        case .own: own.2
        }
    }

    /// §4.1 value: trim, collapse inner whitespace runs (space, tab, CR, LF from obs-fold) to one space;
    /// quotes do not protect spaces (`get-header-value-trim`).
    static func appendTrimmed(_ value: String, to output: inout some ByteSink) {
        ASCIIBytes.withBytes(value) { bytes in
            // Most values (dates, hashes, hosts) have no byte at or below SP at all: nothing to trim or collapse.
            guard hasByteAtMostSpace(bytes) else {
                output.append(bytes: bytes)
                return
            }
            // Copy whole runs of non-whitespace at once: most values have no run to collapse.
            var index = 0
            var needsSpace = false
            while index < bytes.count {
                while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
                guard index < bytes.count else { break }
                let start = index
                while index < bytes.count, !isWhitespace(bytes[index]) { index += 1 }
                if needsSpace { output.append(0x20) }
                output.append(bytes: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                needsSpace = true
            }
        }
    }

    /// Whether some byte is at most 0x20 (SP, HTAB, CR, LF or another control), eight bytes at a time: per byte,
    /// `(x - 0x21) & ~x` has its high bit set iff x < 0x21 (exact for whether any byte is, as a borrow only starts
    /// at such a byte).
    static func hasByteAtMostSpace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if (word &- ones &* 0x21) & ~word & highs != 0 { return true }
                index += 8
            }
        }
        while index < bytes.count {
            if bytes[index] <= 0x20 { return true }
            index += 1
        }
        return false
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte <= 0x20 && (byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A)  // one test for most bytes
    }
}
