/// The HashedPayload: last line of the canonical request and the `x-amz-content-sha256` value (§5).
public enum PayloadHash: Sendable, Equatable {
    /// `UNSIGNED-PAYLOAD`: the body is not covered (streamed uploads; always for presigned URLs).
    case unsigned
    /// SHA-256 of the empty body.
    case emptyBody
    /// SHA-256 of the body, 64 lowercase hex digits.
    case sha256(hex: String)
    /// aws-chunked with signed chunks (§5.1).
    case streamingSigned
    /// aws-chunked with signed chunks and a signed trailer (§5.2).
    case streamingSignedTrailer
    /// aws-chunked, unsigned chunks, trailer checksum (§5.2).
    case streamingUnsignedTrailer

    /// SHA-256 of zero bytes.
    public static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The exact string for the canonical request and the header (§5 table).
    public var value: String {
        switch self {
        case .unsigned: "UNSIGNED-PAYLOAD"
        case .emptyBody: Self.emptySHA256
        case .sha256(let hex): hex
        case .streamingSigned: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
        case .streamingSignedTrailer: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
        case .streamingUnsignedTrailer: "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
        }
    }

    /// Reads a client's `x-amz-content-sha256`: one of the literal names, or 64 hex digits (either case,
    /// stored lower case; the empty-body hash becomes `.emptyBody`). Anything else is nil.
    public init?(clientValue: String) {
        switch clientValue {
        case "UNSIGNED-PAYLOAD": self = .unsigned
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD": self = .streamingSigned
        case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER": self = .streamingSignedTrailer
        case "STREAMING-UNSIGNED-PAYLOAD-TRAILER": self = .streamingUnsignedTrailer
        default:
            guard clientValue.utf8.count == 64 else { return nil }
            var lower: [UInt8] = []
            lower.reserveCapacity(64)
            for byte in clientValue.utf8 {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): lower.append(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): lower.append(byte | 0x20)
                default: return nil
                }
            }
            let hex = String(decoding: lower, as: UTF8.self)
            self = hex == Self.emptySHA256 ? .emptyBody : .sha256(hex: hex)
        }
    }
}
