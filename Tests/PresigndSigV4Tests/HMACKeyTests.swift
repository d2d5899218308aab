import Testing

@testable import PresigndSigV4

/// HMAC-SHA256 on the low-level SHA-256 states (RFC 2104), checked against RFC 4231.
///
/// It replaces the EVP_MAC context, and with it `HMACDigestParameterLifetimeTests` (the OSSL_PARAM lifetime bug
/// of `HMACSHA256.init` cannot recur: no OSSL_PARAM is built any more).
@Suite struct HMACKeyTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var key: [UInt8]
        var data: [UInt8]
        var mac: String
        var testDescription: String { name }
    }

    static func hex(_ digest: Digest32) -> String {
        var digest = digest
        return withUnsafeBytes(of: &digest) { ByteTables.lowerHexString($0) }
    }

    static func mac(prefix: [UInt8] = [], key: [UInt8], data: [UInt8]) throws -> String {
        var output: Digest32 = (0, 0, 0, 0)
        try prefix.withUnsafeBytes { prefix in
            try key.withUnsafeBytes { key in
                let keyed = try HMACKey(prefix: prefix, key: key)
                try data.withUnsafeBytes { try keyed.authenticate($0, into: &output) }
            }
        }
        return hex(output)
    }

    /// RFC 4231 §4.2–4.8 (case 5 tests truncation, which SigV4 never uses).
    static let rfc4231: [Vector] = [
        Vector(
            name: "case 1", key: Array(repeating: 0x0B, count: 20), data: Array("Hi There".utf8),
            mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(
            name: "case 2", key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(
            name: "case 3", key: Array(repeating: 0xAA, count: 20), data: Array(repeating: 0xDD, count: 50),
            mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(
            name: "case 4", key: Array(1...25), data: Array(repeating: 0xCD, count: 50),
            mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(
            name: "case 6 (key longer than a block)", key: Array(repeating: 0xAA, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(
            name: "case 7 (key and data longer than a block)", key: Array(repeating: 0xAA, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                    + "to be hashed before being used by the HMAC algorithm.").utf8),
            mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: rfc4231)
    func matchesRFC4231(vector: Vector) throws {
        #expect(try Self.mac(key: vector.key, data: vector.data) == vector.mac)
        // The same key split into a prefix and the rest (how "AWS4" + secret is passed) gives the same MAC.
        let split = vector.key.count / 3
        #expect(
            try Self.mac(prefix: Array(vector.key[..<split]), key: Array(vector.key[split...]), data: vector.data)
                == vector.mac)
    }

    /// "AWS4" + secret at 63, 64 (one full block, not hashed) and 65 bytes (hashed first); values from Python's
    /// `hmac`.
    @Test(arguments: [
        (63, "a01ece98a4ec9f5d89f10783e7092ab24bb94718c2a4433d57edb84df271fbf1"),
        (64, "c4df1839564bf710e282c5e78f05141b7f03f30a1d0bc91abbc5d97ef634fe2e"),
        (65, "4b6ace400c5255d330de47841ea057f5db8b1522ce63af6f19053381a88235b4"),
    ])
    func handlesKeysAroundTheBlockSize(length: Int, mac: String) throws {
        let secret = Array(repeating: UInt8(ascii: "k"), count: length - 4)
        #expect(try Self.mac(prefix: Array("AWS4".utf8), key: secret, data: Array("20260301".utf8)) == mac)
    }

    @Test func keyedStateIsReusable() throws {
        let keyed = try Array("Jefe".utf8).withUnsafeBytes { try HMACKey(key: $0) }
        let data = Array("what do ya want for nothing?".utf8)
        for _ in 0..<3 {
            var output: Digest32 = (0, 0, 0, 0)
            try data.withUnsafeBytes { try keyed.authenticate($0, into: &output) }
            #expect(Self.hex(output) == Self.rfc4231[1].mac)
        }
    }
}
