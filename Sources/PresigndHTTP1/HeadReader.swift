/// Finds the end of a message head (start line, field lines, empty line: RFC 9112 §2.1) in input arriving in any
/// number of segments. It checks line endings and size limits byte by byte as they arrive, so a slow or hostile
/// peer can neither make it buffer more than `maxHeaderBytes` nor rescan bytes it has already seen.
///
/// A head found whole in one segment is parsed in place; otherwise the segments are copied into `pending` and
/// consumed, but never past the head's last byte (body bytes and pipelined messages stay with the caller).
struct HeadReader: Sendable {
    enum Step<Head> {
        case needMore(consumed: Int)
        case complete(Head, consumed: Int)
    }

    private var pending: [UInt8] = []
    /// Bytes of this head seen so far, skipped leading empty lines included.
    private var scanned = 0
    /// Where the start line begins (after skipped empty lines), in scanned-byte coordinates.
    private var headStart = 0
    private var lineStart = 0
    private var lineCount = 0
    private var leadingEmptyLines = 0
    private var afterCR = false

    /// Whether no byte of a next head has been seen (the connection is between messages).
    var isIdle: Bool { scanned == 0 }

    /// Scans `input`; once the head is complete, hands its bytes (start line through the final CRLF) to `parse`.
    mutating func read<Head>(
        _ input: UnsafeBufferPointer<UInt8>,
        limits: DecoderLimits,
        startLineTooLong: HTTPParseError,
        parse: (UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> Head
    ) throws(HTTPParseError) -> Step<Head> {
        guard let end = try scan(input, limits: limits, startLineTooLong: startLineTooLong) else {
            pending.append(contentsOf: input)
            return .needMore(consumed: input.count)
        }
        // Typed throws rather than a `Result`: the head is moved out, never copied into and out of a generic
        // enum (whose copy and destroy go through the runtime's value witnesses on every message).
        let head: Head
        if pending.isEmpty {
            defer { self = HeadReader() }
            head = try parse(UnsafeBufferPointer(rebasing: input[headStart..<end]))
        } else {
            pending.append(contentsOf: UnsafeBufferPointer(rebasing: input[..<end]))
            let start = headStart
            defer { self = HeadReader() }
            head = try pending.withUnsafeBufferPointer { (all) throws(HTTPParseError) -> Head in
                try parse(UnsafeBufferPointer(rebasing: all[start...]))
            }
        }
        return .complete(head, consumed: end)
    }

    /// Returns the index in `input` just past the head's empty line, or nil when the head continues.
    private mutating func scan(
        _ input: UnsafeBufferPointer<UInt8>, limits: DecoderLimits, startLineTooLong: HTTPParseError
    ) throws(HTTPParseError) -> Int? {
        var index = 0
        while index < input.count {
            // Fast path: skip the bytes of a line that need no decision (not CR or LF, inside both
            // limits) in a tight loop; the byte that stops it gets the full check below.
            if !afterCR {
                var stop = min(input.count, headStart + limits.maxHeaderBytes - scanned)
                if lineCount == 0 { stop = min(stop, lineStart + limits.maxRequestLineBytes - scanned) }
                index = Self.skipToLineBreak(input, from: index, before: stop)
                if index == input.count { break }
            }
            defer { index += 1 }
            let byte = input[index]
            let position = scanned + index
            if position - headStart >= limits.maxHeaderBytes { throw .headerTooLarge }
            if afterCR {
                guard byte == ASCII.lf else { throw .bareCarriageReturn }  // RFC 9112 §2.2
                afterCR = false
                if position - 1 == lineStart {  // an empty line
                    if lineCount > 0 { return index + 1 }
                    // RFC 9112 §2.2: empty lines before the start line are ignored, a few at most.
                    leadingEmptyLines += 1
                    guard leadingEmptyLines <= DecoderLimits.maxLeadingEmptyLines else { throw .invalidRequestLine }
                    headStart = position + 1
                } else {
                    lineCount += 1
                    if lineCount - 1 > limits.maxHeaderCount { throw .tooManyHeaders }
                }
                lineStart = position + 1
            } else if byte == ASCII.cr {
                afterCR = true
            } else if byte == ASCII.lf {
                throw .bareLineFeed  // RFC 9112 §2.2 allows accepting it; we do not
            } else if lineCount == 0, position - lineStart >= limits.maxRequestLineBytes {
                throw startLineTooLong
            }
        }
        scanned += input.count
        return nil
    }

    /// The first index in `from..<before` holding CR or LF, or `before`: eight bytes at a time (a
    /// word has a CR or LF byte iff XOR with the repeated byte leaves a zero byte; the lowest flagged
    /// byte is exact, borrows only flag bytes above it), the last few bytes bytewise.
    @inline(__always)
    static func skipToLineBreak(_ input: UnsafeBufferPointer<UInt8>, from: Int, before stop: Int) -> Int {
        var index = from
        if let base = input.baseAddress {
            let raw = UnsafeRawPointer(base)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= stop {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let cr = word ^ (ones &* UInt64(ASCII.cr))
                let lf = word ^ (ones &* UInt64(ASCII.lf))
                let zeroByte = ((cr &- ones) & ~cr | (lf &- ones) & ~lf) & highs
                if zeroByte != 0 { return index + zeroByte.trailingZeroBitCount >> 3 }
                index += 8
            }
        }
        while index < stop, input[index] != ASCII.cr, input[index] != ASCII.lf { index += 1 }
        return index
    }
}
