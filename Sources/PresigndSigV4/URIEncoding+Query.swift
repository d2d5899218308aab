#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The canonical query string (SIGV4-S3-RULES §3).
extension URIEncoding {
    /// §3 steps 1–3: split on `&` (not `;`), drop empty pieces, split at the first `=` (no `=` means the
    /// value ""), turn `+` into a space, percent-decode. Parameters stay in arrival order.
    /// - Throws: `.malformedPercentEncoding`, `.invalidUTF8`.
    public static func parseQuery(rawQuery: some Collection<UInt8>) throws(SigV4Error) -> [QueryParameter] {
        // From contiguous storage (what strings and arrays have): no copy of the query, no iterator through
        // witness tables for callers in other modules.
        if let parsed = rawQuery.withContiguousStorageIfAvailable({ parseContiguous($0) }) { return try parsed.get() }
        return try Array(rawQuery).withUnsafeBufferPointer { parseContiguous($0) }.get()
    }

    private static func parseContiguous(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<[QueryParameter], SigV4Error> {
        guard !bytes.isEmpty else { return .success([]) }
        var parameters: [QueryParameter] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {  // §3 step 1: drop empty pieces (`a=1&&b=2`)
                var equals = start
                while equals < end, bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                do throws(SigV4Error) {
                    let name = try decodeComponent(bytes, start..<equals)
                    let value = equals < end ? try decodeComponent(bytes, (equals + 1)..<end) : ""
                    parameters.append(QueryParameter(name: name, value: value))
                } catch {
                    return .failure(error)
                }
            }
            start = end + 1
        }
        return .success(parameters)
    }

    /// §3 step 3: form semantics (`+` is a space), then `%XX`; the result must be UTF-8. A component with neither
    /// `%` nor `+` (most are) becomes its String directly, without a decoded copy.
    private static func decodeComponent(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>)
        throws(SigV4Error) -> String
    {
        let component = UnsafeBufferPointer(rebasing: bytes[range])
        let isPlainASCII = !component.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") || $0 >= 0x80 }
        if isPlainASCII { return String(decoding: component, as: UTF8.self) }
        let decoded: [UInt8]
        do {
            decoded = try decodePath(component, plusIsSpace: true)
        } catch .malformedPercentEncoding(let inner) {
            throw .malformedPercentEncoding(offset: range.lowerBound + inner)
        }
        try requireUTF8(decoded)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// §3 steps 4–6: UriEncode names and values (`/` encoded), sort by (name, value) comparing bytes, join
    /// `k=v` with `&`. This exact string is also sent on the wire (§3 step 7).
    public static func canonicalQuery(_ parameters: [QueryParameter]) -> String {
        guard !parameters.isEmpty else { return "" }
        var output: [UInt8] = []
        appendCanonicalQuery(parameters, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Byte-buffer form of `canonicalQuery`.
    static func appendCanonicalQuery(_ parameters: [QueryParameter], to output: inout [UInt8]) {
        var scratch = QueryScratch()
        appendCanonicalQuery(parameters, skippingPresignParameters: false, scratch: &scratch, to: &output)
    }

    /// Reusable buffers of `appendCanonicalQuery`: every encoded name and value back to back, and their ranges.
    struct QueryScratch {
        var bytes: [UInt8] = []
        var ranges: [(name: Range<Int>, value: Range<Int>)] = []
    }

    /// `appendCanonicalQuery` on the caller's scratch buffers; with `skippingPresignParameters` the client's
    /// `X-Amz-*` presign parameters are left out (§4.4: replaced, never forwarded).
    static func appendCanonicalQuery(
        _ parameters: [QueryParameter], skippingPresignParameters: Bool, scratch: inout QueryScratch,
        to output: inout some ByteSink
    ) {
        guard !parameters.isEmpty else { return }
        // Encode every name and value into one scratch buffer and sort ranges of it (no array per parameter).
        scratch.bytes.removeAll(keepingCapacity: true)
        scratch.ranges.removeAll(keepingCapacity: true)
        for parameter in parameters {
            if skippingPresignParameters, PresignParameters.isPresignParameter(name: parameter.name) { continue }
            let nameStart = scratch.bytes.count
            append(parameter.name.utf8, keepingSlash: false, to: &scratch.bytes)
            let valueStart = scratch.bytes.count
            append(parameter.value.utf8, keepingSlash: false, to: &scratch.bytes)
            scratch.ranges.append((nameStart..<valueStart, valueStart..<scratch.bytes.count))
        }
        scratch.bytes.withUnsafeBufferPointer { bytes in
            // §3 step 5: compare (key, value) pairs, not joined strings: `Param` < `Param-3`.
            func precedes(_ left: Range<Int>, _ right: Range<Int>) -> Bool? {
                let common = min(left.count, right.count)
                if common > 0, let base = bytes.baseAddress {
                    let order = memcmp(base + left.lowerBound, base + right.lowerBound, common)
                    if order != 0 { return order < 0 }
                }
                return left.count == right.count ? nil : left.count < right.count
            }
            if scratch.ranges.count > 1 {
                scratch.ranges.sort { left, right in
                    precedes(left.name, right.name) ?? precedes(left.value, right.value) ?? false
                }
            }
            for (index, pair) in scratch.ranges.enumerated() {
                if index > 0 { output.append(UInt8(ascii: "&")) }
                output.append(bytes: UnsafeBufferPointer(rebasing: bytes[pair.name]))
                output.append(UInt8(ascii: "="))
                output.append(bytes: UnsafeBufferPointer(rebasing: bytes[pair.value]))
            }
        }
    }
}
