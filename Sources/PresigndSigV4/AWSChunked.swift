internal import PresigndHTTP1

/// aws-chunked framing arithmetic (SIGV4-S3-RULES §5.1, §5.2).
public enum AWSChunked {
    /// Length of `hex(size) ";chunk-signature=" <64 hex> "\r\n" data "\r\n"` summed over full chunks of
    /// `chunkSize`, the remainder chunk, and the final empty chunk (§5.1). The AWS example (65536 + 1024
    /// bytes in 64 KiB chunks) gives 66824.
    public static func encodedLength(decodedLength: Int, chunkSize: Int) -> Int {
        framedLength(decodedLength: decodedLength, chunkSize: chunkSize, perChunkOverhead: 17 + 64 + 2 + 2)
    }

    /// The unsigned-trailer variant (§5.2): `hex(size) "\r\n" data "\r\n"` per chunk, then `0\r\n`, then
    /// `trailerLength` bytes of trailer lines (each ending `\r\n`), then `\r\n`.
    public static func unsignedTrailerEncodedLength(decodedLength: Int, chunkSize: Int, trailerLength: Int) -> Int {
        let chunks = framedLength(decodedLength: decodedLength, chunkSize: chunkSize, perChunkOverhead: 4)
        // framedLength counted the final chunk as `0\r\n\r\n` (5 bytes); the trailer sits between its CRLFs.
        return chunks + trailerLength
    }

    /// Canonical trailer lines: `lowercase(name):trimmed value\n` each, in the order given (§5.2).
    public static func canonicalTrailer(_ headers: [(name: String, value: String)]) -> String {
        var output: [UInt8] = []
        for header in headers {
            output.append(contentsOf: ASCII.lowercased(header.name).utf8)
            output.append(UInt8(ascii: ":"))
            CanonicalHeaders.appendTrimmed(header.value, to: &output)
            output.append(0x0A)
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func framedLength(decodedLength: Int, chunkSize: Int, perChunkOverhead: Int) -> Int {
        precondition(chunkSize > 0 && decodedLength >= 0, "chunk size must be positive")
        func frame(_ size: Int) -> Int { hexDigits(size) + perChunkOverhead + size }
        let fullChunks = decodedLength / chunkSize
        let remainder = decodedLength % chunkSize
        return fullChunks * frame(chunkSize) + (remainder > 0 ? frame(remainder) : 0) + frame(0)
    }

    private static func hexDigits(_ value: Int) -> Int {
        var digits = 1
        var rest = value >> 4
        while rest > 0 {
            digits += 1
            rest >>= 4
        }
        return digits
    }
}
