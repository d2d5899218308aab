#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the canonicalization helpers append bytes: a `[UInt8]`, or the signer's `ByteWriter` scratch.
protocol ByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: ByteSink where Element == UInt8 {
    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

extension ByteSink {
    /// Appends the bytes of an ASCII literal.
    @inline(__always)
    mutating func append(literal: StaticString) {
        append(bytes: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 bytes of `text`.
    @inline(__always)
    mutating func append(utf8 text: String) {
        ASCIIBytes.withBytes(text) { append(bytes: $0) }
    }
}

/// A growable byte buffer on `malloc`ed memory: an append is a capacity check and a copy, without `Array`'s
/// uniqueness check and generic dispatch on every call (the signer makes dozens of small appends a request).
///
/// It is a plain value holding a pointer: exactly one owner must call `deallocate()` (the `Signer` for its
/// `SigningScratch`, a `defer` for a local one). Never copy one and use both copies.
struct ByteWriter: ByteSink {
    private(set) var base: UnsafeMutablePointer<UInt8>?
    private(set) var count = 0
    private var capacity = 0

    init() {}

    /// The bytes written so far; valid until the next append.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// A written range; valid until the next append.
    subscript(range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range outside the written bytes")
        return UnsafeBufferPointer(start: base.map { $0 + range.lowerBound }, count: range.count)
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(minimum: count + 1) }
        base.unsafelyUnwrapped[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if capacity - count < bytes.count { grow(minimum: count + bytes.count) }
        (base.unsafelyUnwrapped + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Forgets the contents, keeps the memory.
    mutating func removeAll() { count = 0 }

    mutating func deallocate() {
        free(base)
        base = nil
        count = 0
        capacity = 0
    }

    private mutating func grow(minimum: Int) {
        let newCapacity = max(minimum, capacity * 2, 256)
        guard let grown = realloc(base, newCapacity) else { fatalError("out of memory") }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }
}

/// A `ByteSink` over memory sized in advance (a string's uninitialized storage): appends write in place.
struct FixedBufferSink: ByteSink {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0, let base = buffer.baseAddress else { return }
        precondition(count + bytes.count <= buffer.count, "FixedBufferSink overflow")
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }
}
