/// Everything that can go wrong while canonicalizing or signing a request.
public enum SigV4Error: Error, Equatable, Sendable {
    /// A `%` not followed by two hex digits, at this byte offset of the raw input (§2.3 step 1, §3 step 3).
    case malformedPercentEncoding(offset: Int)
    /// Decoded bytes are not UTF-8; S3 and R2 keys are UTF-8 (§2.3 step 1).
    case invalidUTF8
    /// `X-Amz-Expires` outside 1...604800 (§7).
    case invalidExpiry(seconds: Int)
    /// An OpenSSL call failed; the payload describes the `OpenSSLError` (the call and its drained error queue).
    case crypto(String)
}
