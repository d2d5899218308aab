/// aws-chunked chunk and trailer signatures (SIGV4-S3-RULES §5.1, §5.2).
///
/// The seed signature is the ordinary header signature with `.streamingSigned` (or
/// `.streamingSignedTrailer`) as the payload; each chunk chains on the previous signature.
extension Signer {
    /// `AWS4-HMAC-SHA256-PAYLOAD \n date \n scope \n previous \n Hex(SHA256("")) \n chunkSHA256Hex` (§5.1).
    public func chunkSignature(previousSignature: String, chunkSHA256Hex: String, date: AmzDate) throws(SigV4Error)
        -> String
    {
        let stringToSign = stringToSign(
            algorithm: "AWS4-HMAC-SHA256-PAYLOAD", date: date,
            lines: [previousSignature, PayloadHash.emptySHA256, chunkSHA256Hex])
        return try signature(of: stringToSign, dateStamp: date.dateStamp)
    }

    /// Hashes `chunk`, then signs it like `chunkSignature(…chunkSHA256Hex:…)`.
    public func chunkSignature(previousSignature: String, chunk: UnsafeRawBufferPointer, date: AmzDate)
        throws(SigV4Error) -> String
    {
        let hex = try sha256Hex(chunk)
        return try chunkSignature(previousSignature: previousSignature, chunkSHA256Hex: hex, date: date)
    }

    /// `AWS4-HMAC-SHA256-TRAILER \n date \n scope \n previous \n Hex(SHA256(trailerLines))` (§5.2), where
    /// `previous` is the final (0-byte) chunk's signature and `trailerLines` are `name:value\n` lines
    /// (see `AWSChunked.canonicalTrailer`).
    public func trailerSignature(previousSignature: String, trailerLines: String, date: AmzDate) throws(SigV4Error)
        -> String
    {
        let hash = try sha256Hex(Array(trailerLines.utf8))
        let stringToSign = stringToSign(
            algorithm: "AWS4-HMAC-SHA256-TRAILER", date: date, lines: [previousSignature, hash])
        return try signature(of: stringToSign, dateStamp: date.dateStamp)
    }
}
