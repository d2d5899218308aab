/// The S3 additional checksums a client may send as an `x-amz-checksum-*` header or an aws-chunked trailer
/// (SIGV4-S3-RULES §5.2; S3 "Checking object integrity").
public enum ChecksumAlgorithm: String, Sendable, Equatable, CaseIterable {
    case crc32
    case crc32c
    case crc64nvme
    case sha1
    case sha256

    /// The field name, `x-amz-checksum-crc32` and so on.
    public var fieldName: String { "x-amz-checksum-" + rawValue }

    /// Reads a field name (`x-amz-trailer`'s value), in any case.
    public init?(fieldName: some StringProtocol) {
        let lower = fieldName.lowercased()
        guard lower.hasPrefix("x-amz-checksum-"), let algorithm = Self(rawValue: String(lower.dropFirst(15))) else {
            return nil
        }
        self = algorithm
    }

    /// Bytes of the digest.
    public var digestSize: Int {
        switch self {
        case .crc32, .crc32c: 4
        case .crc64nvme: 8
        case .sha1: 20
        case .sha256: 32
        }
    }

    /// Characters of the digest in padded base64, as the field carries it.
    public var base64Length: Int { (digestSize + 2) / 3 * 4 }
}

/// A checksum computed incrementally over the bytes of a body as they pass (`ChecksumAlgorithm`): the CRCs here
/// (`ReflectedCRC`), SHA-1 and SHA-256 through OpenSSL (`EVPDigest`). Not `Sendable`: one per upload.
public final class PayloadChecksum {
    private enum State {
        case crc(ReflectedCRC, register: UInt64)
        case digest(EVPDigest)
    }

    public let algorithm: ChecksumAlgorithm
    private var state: State

    public init(_ algorithm: ChecksumAlgorithm) throws(SigV4Error) {
        self.algorithm = algorithm
        switch algorithm {
        case .crc32: state = .crc(.crc32, register: ReflectedCRC.crc32.initial)
        case .crc32c: state = .crc(.crc32c, register: ReflectedCRC.crc32c.initial)
        case .crc64nvme: state = .crc(.crc64nvme, register: ReflectedCRC.crc64nvme.initial)
        case .sha1: state = .digest(try EVPDigest(.sha1))
        case .sha256: state = .digest(try EVPDigest(.sha256))
        }
    }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(SigV4Error) {
        switch state {
        case .crc(let crc, let register): state = .crc(crc, register: crc.update(register, bytes))
        case .digest(let digest): try digest.update(bytes)
        }
    }

    /// The digest, big-endian for the CRCs (as S3 writes them).
    public func finish() throws(SigV4Error) -> [UInt8] {
        switch state {
        case .crc(let crc, let register):
            let value = crc.finish(register)
            let size = algorithm.digestSize
            return (0..<size).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (size - 1 - $0))) }
        case .digest(let digest):
            return try digest.finish()
        }
    }

    /// The digest in base64, as an `x-amz-checksum-*` field carries it.
    public func finishBase64() throws(SigV4Error) -> String {
        Base64.encode(try finish())
    }
}
