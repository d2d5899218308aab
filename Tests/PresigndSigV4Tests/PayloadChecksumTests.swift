import Foundation
import PresigndSigV4
import Testing

/// The checksums S3 takes as `x-amz-checksum-*` (issue 21), against published check values ("123456789", the
/// CRC catalogue's `check`), and incremental feeding split at every offset matching one-shot results.
@Suite struct PayloadChecksumTests {
    static let check = Array("123456789".utf8)

    static func digest(_ algorithm: ChecksumAlgorithm, _ pieces: [[UInt8]]) throws -> [UInt8] {
        let checksum = try PayloadChecksum(algorithm)
        for piece in pieces { try piece.withUnsafeBytes { try checksum.update($0) } }
        return try checksum.finish()
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: [
        (ChecksumAlgorithm.crc32, "cbf43926"),
        (.crc32c, "e3069283"),
        (.crc64nvme, "ae8b14860a799888"),
        (.sha1, "f7c3bc1d808e04732adf679965ccc34ca7ae3441"),
        (.sha256, "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"),
    ])
    func matchesTheCheckValue(algorithm: ChecksumAlgorithm, expected: String) throws {
        #expect(Self.hex(try Self.digest(algorithm, [Self.check])) == expected)
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func feedingInPiecesGivesTheSameDigest(algorithm: ChecksumAlgorithm) throws {
        var generator = SystemRandomNumberGenerator()
        let data = (0..<1000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let whole = try Self.digest(algorithm, [data])
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            #expect(try Self.digest(algorithm, [Array(data[..<split]), Array(data[split...])]) == whole)
        }
        #expect(try Self.digest(algorithm, data.map { [$0] }) == whole)
        #expect(whole.count == algorithm.digestSize)
    }

    /// The empty input and S3's own example (`x-amz-checksum-crc32` of "hello world" is `DUoRhQ==`).
    @Test func encodesAsS3Does() throws {
        #expect(Self.hex(try Self.digest(.crc32, [])) == "00000000")
        let checksum = try PayloadChecksum(.crc32)
        try Array("hello world".utf8).withUnsafeBytes { try checksum.update($0) }
        #expect(try checksum.finishBase64() == "DUoRhQ==")
        #expect(ChecksumAlgorithm.allCases.map(\.base64Length) == [8, 8, 12, 28, 44])
    }

    @Test func readsFieldNamesInAnyCase() {
        #expect(ChecksumAlgorithm(fieldName: "X-Amz-Checksum-CRC64NVME") == .crc64nvme)
        #expect(ChecksumAlgorithm(fieldName: "x-amz-checksum-md5") == nil)
        #expect(ChecksumAlgorithm(fieldName: "x-amz-checksum-type") == nil)
        #expect(ChecksumAlgorithm.sha1.fieldName == "x-amz-checksum-sha1")
    }
}
