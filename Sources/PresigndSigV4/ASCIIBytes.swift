internal import PresigndHTTP1

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-span helpers for the header signer: header names are matched, lower-cased and sorted as bytes, never
/// as `String`s (STYLE: the hot path works on byte buffers). Case folds with `ASCII` (PresigndHTTP1).
enum ASCIIBytes {
    /// Calls `body` with the UTF-8 bytes of `text`: in place for native strings (small ones are copied to the
    /// stack by the standard library), through a temporary array otherwise.
    @inline(__always)
    static func withBytes<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// `bytes` is exactly `literal`.
    @inline(__always)
    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress else { return true }
        return memcmp(base, literal.utf8Start, bytes.count) == 0
    }

    /// The two spans hold the same bytes.
    @inline(__always)
    static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        guard let a = left.baseAddress, let b = right.baseAddress else { return true }
        return memcmp(a, b, left.count) == 0
    }

    /// `bytes` starts with `literal`.
    @inline(__always)
    static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count >= literal.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress else { return true }
        return memcmp(base, literal.utf8Start, literal.utf8CodeUnitCount) == 0
    }

    /// Appends `bytes` ASCII-lower-cased to `output`.
    @inline(__always)
    static func appendLowercased(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout some ByteSink) {
        for byte in bytes { output.append(ASCII.lowercased(byte)) }
    }

    /// Byte order (§4.1 and §3 sort by bytes, not by Unicode collation); a prefix sorts first.
    @inline(__always)
    static func less(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = min(left.count, right.count)
        if common > 0, let a = left.baseAddress, let b = right.baseAddress {
            let order = memcmp(a, b, common)
            if order != 0 { return order < 0 }
        }
        return left.count < right.count
    }
}
