/// UriEncode and the S3 canonical URI (SIGV4-S3-RULES §2).
///
/// S3 rules: encode once, never normalize (`.`/`..`/`//`/trailing `/` kept), decode the client's path once
/// and re-encode it so the wire path and the canonical URI are the same bytes (§2.3).
public enum URIEncoding {
    /// UriEncode (§2.1): keep `A–Z a–z 0–9 - _ . ~` (and `/` when `keepingSlash`), `%XY` upper-case for
    /// every other byte. A space is `%20`, a `+` is `%2B`.
    public static func encode(_ bytes: some Collection<UInt8>, keepingSlash: Bool) -> String {
        // Sized exactly, then written straight into the string's storage: one allocation, none at all for
        // results of up to 15 bytes (small strings).
        let encoded: String? = bytes.withContiguousStorageIfAvailable { input in
            String(unsafeUninitializedCapacity: encodedLength(input, keepingSlash: keepingSlash)) { storage in
                var sink = FixedBufferSink(buffer: storage)
                appendContiguous(input, keepingSlash: keepingSlash, to: &sink)
                return sink.count
            }
        }
        if let encoded { return encoded }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2)
        append(bytes, keepingSlash: keepingSlash, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// UriEncode into a byte buffer (the signer's hot path).
    static func append(_ bytes: some Collection<UInt8>, keepingSlash: Bool, to output: inout [UInt8]) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            appendContiguous(buffer, keepingSlash: keepingSlash, to: &output)
        }
        if handled == nil {
            Array(bytes).withUnsafeBufferPointer { appendContiguous($0, keepingSlash: keepingSlash, to: &output) }
        }
    }

    @inline(__always)
    private static func isKept(_ byte: UInt8, _ unreserved: UnsafeBufferPointer<Bool>, keepingSlash: Bool) -> Bool {
        unreserved[Int(byte)] || (keepingSlash && byte == UInt8(ascii: "/"))
    }

    /// The length of the UriEncoded form: 1 byte per kept byte, 3 per escaped one.
    private static func encodedLength(_ bytes: UnsafeBufferPointer<UInt8>, keepingSlash: Bool) -> Int {
        ByteTables.unreserved.withUnsafeBufferPointer { unreserved in
            var length = 0
            for byte in bytes { length += isKept(byte, unreserved, keepingSlash: keepingSlash) ? 1 : 3 }
            return length
        }
    }

    /// Copies runs of kept bytes in bulk; escapes the rest as `%XY`.
    private static func appendContiguous(
        _ bytes: UnsafeBufferPointer<UInt8>, keepingSlash: Bool, to output: inout some ByteSink
    ) {
        ByteTables.unreserved.withUnsafeBufferPointer { unreserved in
            ByteTables.upperHex.withUnsafeBufferPointer { hex in
                var index = 0
                while index < bytes.count {
                    let start = index
                    while index < bytes.count, isKept(bytes[index], unreserved, keepingSlash: keepingSlash) {
                        index += 1
                    }
                    if index > start { output.append(bytes: UnsafeBufferPointer(rebasing: bytes[start..<index])) }
                    guard index < bytes.count else { break }
                    let byte = bytes[index]
                    output.append(UInt8(ascii: "%"))
                    output.append(hex[Int(byte >> 4)])
                    output.append(hex[Int(byte & 0x0F)])
                    index += 1
                }
            }
        }
    }

    /// Percent-decodes once, as bytes (§2.3 step 1). Every byte other than `%XX` is kept; with
    /// `plusIsSpace` a raw `+` becomes a space (§2.4 `plus_in_path_is_space`; §3 step 3 for queries).
    /// - Throws: `.malformedPercentEncoding` for `%`, `%4`, `%zz`.
    public static func decodePath(_ raw: some Collection<UInt8>, plusIsSpace: Bool = false) throws(SigV4Error)
        -> [UInt8]
    {
        // Callers in other modules get this generic unspecialized: decode from contiguous storage
        // (what strings and arrays have) instead of walking an iterator through witness tables.
        if let decoded = raw.withContiguousStorageIfAvailable({ decodeContiguous($0, plusIsSpace: plusIsSpace) }) {
            return try decoded.get()
        }
        return try Array(raw).withUnsafeBufferPointer { decodeContiguous($0, plusIsSpace: plusIsSpace) }.get()
    }

    private static func decodeContiguous(_ raw: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool)
        -> Result<[UInt8], SigV4Error>
    {
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = 0
        while index < raw.count {
            let byte = raw[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < raw.count else { return .failure(.malformedPercentEncoding(offset: index)) }
                let highValue = ByteTables.hexValue[Int(raw[index + 1])]
                let lowValue = ByteTables.hexValue[Int(raw[index + 2])]
                guard highValue != 0xFF, lowValue != 0xFF else {
                    return .failure(.malformedPercentEncoding(offset: index))
                }
                output.append(highValue << 4 | lowValue)
                index += 3
            } else {
                output.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return .success(output)
    }

    /// The canonical URI, which is also the wire path (§2.3): decode once, require UTF-8, UriEncode keeping
    /// `/`. An empty path is `/` (§2.2). No dot-segment removal, no `//` merging (§2.2 "Do not normalize").
    public static func canonicalPath(rawPath: some Collection<UInt8>, plusIsSpace: Bool = false)
        throws(SigV4Error) -> String
    {
        let decoded = try decodePath(rawPath, plusIsSpace: plusIsSpace)
        guard !decoded.isEmpty else { return "/" }
        try requireUTF8(decoded)
        return encode(decoded, keepingSlash: true)
    }

    /// Throws `.invalidUTF8` unless `bytes` are well-formed UTF-8 (no overlongs, no surrogates).
    static func requireUTF8(_ bytes: [UInt8]) throws(SigV4Error) {
        // Fast path: pure ASCII needs no validation.
        if !bytes.contains(where: { $0 >= 0x80 }) { return }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .invalidUTF8 }
    }
}
