/// A reflected (LSB-first) CRC of up to 64 bits, computed slice-by-8: eight 256-entry tables, eight bytes per step.
///
/// One implementation serves the three CRCs S3 uses as `x-amz-checksum-*` (`ChecksumAlgorithm`): CRC-32
/// (ISO-HDLC, as zlib), CRC-32C (Castagnoli, iSCSI) and CRC-64/NVME. All three start from all ones and end with an
/// XOR of all ones. A 32-bit CRC runs in the low half of the 64-bit register: the step is linear, so the same
/// eight lookups hold (the upper four bytes of each eight simply carry no register bits).
public struct ReflectedCRC: Sendable {
    /// `tables[k * 256 + n]`: the register after byte `n` followed by `k` zero bytes.
    private let tables: [UInt64]
    private let mask: UInt64

    /// `polynomial` in reflected form (CRC-32: 0xEDB88320), `width` 32 or 64.
    public init(reflectedPolynomial polynomial: UInt64, width: Int) {
        precondition(width == 32 || width == 64, "32- or 64-bit CRCs only")
        mask = width == 64 ? ~0 : (1 << UInt64(width)) - 1
        var tables = [UInt64](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt64(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        self.tables = tables
    }

    /// The register before any byte (all ones).
    public var initial: UInt64 { mask }

    /// The register after `bytes`, continuing from `register` (start with `initial`).
    public func update(_ register: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var crc = register
        tables.withUnsafeBufferPointer { table in
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let word = crc ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                crc =
                    table[7 * 256 + Int(word & 0xFF)] ^ table[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((word >> 16) & 0xFF)] ^ table[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ table[3 * 256 + Int((word >> 32) & 0xFF)] ^ table[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ table[1 * 256 + Int((word >> 48) & 0xFF)] ^ table[Int(word >> 56)]
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ table[Int((crc ^ UInt64(bytes[index])) & 0xFF)]
                index += 1
            }
        }
        return crc
    }

    /// The CRC value of a finished register (the final XOR).
    public func finish(_ register: UInt64) -> UInt64 { register ^ mask }

    /// CRC-32 (ISO-HDLC; zlib's `crc32`): "123456789" → 0xCBF43926.
    public static let crc32 = ReflectedCRC(reflectedPolynomial: 0xEDB8_8320, width: 32)
    /// CRC-32C (Castagnoli): "123456789" → 0xE3069283.
    public static let crc32c = ReflectedCRC(reflectedPolynomial: 0x82F6_3B78, width: 32)
    /// CRC-64/NVME (the NVMe spec's, S3's `CRC64NVME`): "123456789" → 0xAE8B14860A799888.
    public static let crc64nvme = ReflectedCRC(reflectedPolynomial: 0x9A6C_9329_AC4B_C9B5, width: 64)
}
