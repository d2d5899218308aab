/// The result of header signing: everything to send, plus each SigV4 stage for diagnostics.
///
/// It has no setters: signing is the last change to a request (DESIGN §2).
public struct SignedRequest: Sendable {
    public let method: String
    /// The wire request-target: path, then `?` and the canonical query when there is one (§3 step 7).
    public let target: String
    /// Headers to send: the input minus stripped ones, then `X-Amz-Date`, `X-Amz-Content-SHA256` (when
    /// added), `X-Amz-Security-Token` (with a session token) and `Authorization`.
    public let headers: [(name: String, value: String)]
    /// The canonical query alone ("" when none): the query part of `target`.
    public let canonicalQuery: String
    /// `host;x-amz-content-sha256;x-amz-date`.
    public let signedHeaders: String
    /// 64 lower-case hex digits.
    public let signature: String
    /// The `Authorization` header value.
    public let authorization: String
    let canonicalRequestBytes: [UInt8]
    let stringToSignBytes: [UInt8]

    /// The canonical request (§1), built lazily from the bytes the signature was computed over.
    public var canonicalRequest: String { String(decoding: canonicalRequestBytes, as: UTF8.self) }
    /// The string to sign (§1).
    public var stringToSign: String { String(decoding: stringToSignBytes, as: UTF8.self) }
}

/// The result of query-string signing (§7).
public struct PresignedURL: Sendable {
    /// `scheme://host/path?canonical-query&X-Amz-Signature=…`.
    public let url: String
    public let method: String
    public let canonicalRequest: String
    public let stringToSign: String
    public let signature: String
    /// Headers besides `host` that whoever uses the URL must send with exactly these values (§7, [R2-BOTO3]).
    public let signedHeaders: [(name: String, value: String)]
    /// `X-Amz-Date` + `X-Amz-Expires`, epoch seconds.
    public let expiresAt: Int
}
