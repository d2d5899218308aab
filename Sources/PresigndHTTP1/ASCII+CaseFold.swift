/// The ASCII case fold, the one every module uses: for what HTTP compares case-insensitively (field names, coding
/// and list tokens, the scheme and host of a target: RFC 9110 §5.1, §7.8, RFC 3986 §3.1, §3.2.2) and for the
/// lower-case names SigV4 signs (SIGV4-S3-RULES §4.1). Only `A`–`Z` fold: `String.lowercased()` is Unicode-aware
/// (U+212A KELVIN SIGN lowers to `k`) and allocates.
///
/// Inlinable: the signer and the proxy call the byte fold per byte of every header name.
extension ASCII {
    /// `byte` with `A`–`Z` lowered; any other byte as it is.
    @inlinable @inline(__always)
    public static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// `byte` with `a`–`z` raised; any other byte as it is.
    @inlinable @inline(__always)
    public static func uppercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "a") < 26 ? byte & 0xDF : byte
    }

    /// `text` with `A`–`Z` lowered: `text` itself (no allocation) when it has none.
    public static func lowercased(_ text: String) -> String { folded(text, lowercased) }

    /// `text` with `a`–`z` raised: `text` itself (no allocation) when it has none.
    public static func uppercased(_ text: String) -> String { folded(text, uppercased) }

    private static func folded(_ text: String, _ fold: (UInt8) -> UInt8) -> String {
        // Native strings are contiguous: an indexed loop, not the UTF-8 view's iterator and a closure per byte.
        let unchanged =
            text.utf8.withContiguousStorageIfAvailable { bytes in
                for index in 0..<bytes.count where fold(bytes[index]) != bytes[index] { return false }
                return true
            } ?? !text.utf8.contains(where: { fold($0) != $0 })
        guard !unchanged else { return text }
        let count = text.utf8.count
        // Folding ASCII letters keeps the bytes valid UTF-8.
        return String(unsafeUninitializedCapacity: count) { buffer in
            var index = 0
            for byte in text.utf8 {
                buffer[index] = fold(byte)
                index += 1
            }
            return count
        }
    }

    /// Whether `bytes` equals `literal` ignoring ASCII case (`literal` must be lower case). For contiguous bytes
    /// (field names, list elements): a length check, then an indexed loop, without the iterator and closure of
    /// the sequence version (a few instructions a byte instead of ~20).
    @inlinable @inline(__always)
    public static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard literal.hasPointerRepresentation else { return equalsLowercase(bytes[...], literal) }
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for index in 0..<bytes.count where lowercased(bytes[index]) != expected[index] { return false }
        return true
    }

    /// Whether `bytes` equals `literal` ignoring ASCII case (`literal` must be lower case).
    @inlinable
    public static func equalsLowercase(_ bytes: some Sequence<UInt8>, _ literal: StaticString) -> Bool {
        var iterator = bytes.makeIterator()
        let matched = literal.withUTF8Buffer { expected -> Bool in
            for e in expected {
                guard let b = iterator.next(), lowercased(b) == e else { return false }
            }
            return true
        }
        return matched && iterator.next() == nil
    }

    /// Whether `text` equals `literal` ignoring ASCII case (`literal` must be lower case): on the string's
    /// contiguous bytes when it has them (native strings do).
    @inlinable
    public static func equalsLowercase(_ text: String, _ literal: StaticString) -> Bool {
        if let result = text.utf8.withContiguousStorageIfAvailable({ equalsLowercase($0, literal) }) { return result }
        return equalsLowercase(text.utf8, literal)
    }

    /// Whether `text` starts with `literal` ignoring ASCII case (`literal` must be lower case), without the
    /// lower-cased copy `lowercased(text).hasPrefix(literal)` would allocate for a name with capitals.
    @inlinable
    public static func hasLowercasePrefix(_ text: String, _ literal: StaticString) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard text.utf8.count >= length else { return false }
        if let result = text.utf8.withContiguousStorageIfAvailable({
            equalsLowercase(UnsafeBufferPointer(rebasing: $0[..<length]), literal)
        }) {
            return result
        }
        return equalsLowercase(text.utf8.prefix(length), literal)
    }

    /// Whether two strings are equal ignoring ASCII case (field names and coding tokens, RFC 9110 §5.1, §7.8).
    /// The length check and an exact comparison (names usually arrive in their canonical case; short strings
    /// compare as two words) are inlined; only the rest compares bytewise.
    @inlinable @inline(__always)
    public static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && (a == b || sameLengthEqualsIgnoringCase(a, b))
    }

    @usableFromInline
    static func sameLengthEqualsIgnoringCase(_ a: String, _ b: String) -> Bool {
        // Native strings are contiguous UTF-8: compare the buffers directly; the generic sequence
        // walk is the fallback (bridged strings).
        let fast = a.utf8.withContiguousStorageIfAvailable { left in
            b.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<left.count where lowercased(left[index]) != lowercased(right[index]) {
                    return false
                }
                return true
            }
        }
        if let fast, let fast { return fast }
        return a.utf8.elementsEqual(b.utf8) { lowercased($0) == lowercased($1) }
    }
}
