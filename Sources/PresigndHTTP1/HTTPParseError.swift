/// Why a message could not be decoded. After throwing one, a decoder stays failed and throws it again: the caller
/// answers (for requests, with `status`) and closes the connection, since the framing can no longer be trusted.
public enum HTTPParseError: Error, Sendable, Equatable, Hashable {
    /// Request line longer than `maxRequestLineBytes` (RFC 9112 §3: 414).
    case requestLineTooLong
    /// Status line longer than `maxRequestLineBytes`.
    case statusLineTooLong
    /// Head longer than `maxHeaderBytes` (RFC 6585 §5: 431).
    case headerTooLarge
    /// More than `maxHeaderCount` field lines (431).
    case tooManyHeaders
    /// Request line not `method SP request-target SP HTTP-version` (RFC 9112 §3), or too many leading empty lines.
    case invalidRequestLine
    /// Status line not `HTTP-version SP 3DIGIT SP reason-phrase` (RFC 9112 §4).
    case invalidStatusLine
    /// Method is not a token (RFC 9110 §9.1).
    case invalidMethod
    /// Request-target has bytes outside visible ASCII or `#`, or a form the method does not allow (RFC 9112 §3.2).
    case invalidTarget
    /// HTTP-version is not `HTTP/D.D` (RFC 9112 §2.3).
    case invalidVersion
    /// A major version other than 1 (RFC 9110 §15.6.6: 505).
    case unsupportedVersion
    /// A line ends in LF without CR. Accepted by RFC 9112 §2.2 as an option; rejected here, strictly.
    case bareLineFeed
    /// A CR not followed by LF (RFC 9112 §2.2).
    case bareCarriageReturn
    /// A field name that is empty or not a token, or a field line without a colon (RFC 9110 §5.1).
    case invalidHeaderName
    /// Whitespace between a field name and its colon (RFC 9112 §5.1: MUST reject).
    case whitespaceBeforeColon
    /// A field value with NUL, DEL, a control other than HTAB, or invalid UTF-8 (RFC 9110 §5.5).
    case invalidHeaderValue
    /// A field line starting with SP or HTAB: obsolete line folding (RFC 9112 §5.2).
    case obsFold
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2: 400).
    case missingHost
    /// More than one Host field (RFC 9112 §3.2: 400).
    case multipleHost
    /// Both Content-Length and Transfer-Encoding (RFC 9112 §6.1, §6.3 (3)): a smuggling vector, refused.
    case contentLengthAndTransferEncoding
    /// Content-Length not 1*DIGIT or beyond `Int.max` (RFC 9112 §6.3 (5)).
    case invalidContentLength
    /// Content-Length values that differ (RFC 9110 §8.6).
    case conflictingContentLength
    /// A transfer coding list other than exactly `chunked` (RFC 9112 §6.1: 501).
    case unsupportedTransferEncoding
    /// Transfer-Encoding in an HTTP/1.0 message: faulty framing (RFC 9112 §6.1).
    case transferEncodingInHTTP10
    /// A chunk-size that is empty or not hex (RFC 9112 §7.1).
    case invalidChunkSize
    /// A chunk-size beyond `Int.max`.
    case chunkSizeOverflow
    /// A chunk extension with control bytes (RFC 9112 §7.1.1).
    case invalidChunkExtension
    /// A chunk-size line longer than `maxChunkLineBytes`.
    case chunkLineTooLong
    /// Chunk data not followed by CRLF, a chunk line not ended by CRLF, or bytes after an aws-chunked body.
    case invalidChunkFraming
    /// A trailer section longer than `maxTrailerBytes` (RFC 9112 §7.1.2).
    case trailerTooLarge
    /// A 101 Switching Protocols response: presignd never asks for an upgrade (RFC 9110 §15.2.2).
    case unexpectedUpgrade

    /// The status a server answers this error with. Meaningful for request errors; a proxy answers a response
    /// decoding error with 502 instead.
    public var status: Int {
        switch self {
        case .requestLineTooLong: 414
        case .headerTooLarge, .tooManyHeaders: 431
        case .unsupportedTransferEncoding: 501
        case .unsupportedVersion: 505
        default: 400
        }
    }
}
