import Testing

@testable import PresigndSigV4

/// Regression: `HMACSHA256.init` passed the imported `OSSL_MAC_PARAM_DIGEST` String straight into
/// `OSSL_PARAM_construct_utf8_string`, so the parameter's key pointed at a temporary C string that was freed before
/// `EVP_MAC_CTX_set_params` compared it (AddressSanitizer: heap-use-after-free in `OSSL_PARAM_locate`, found by
/// `scripts/sanitizers.sh`). Without ASan the freed bytes could be reused by another thread, the digest parameter
/// was then silently not found, and signing failed or used the wrong digest.
@Suite struct HMACDigestParameterLifetimeTests {
    /// RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    static let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"

    static func rfc4231Case2() throws -> String {
        let hmac = try HMACSHA256()
        try Array("Jefe".utf8).withUnsafeBytes { try hmac.rekey($0) }
        try Array("what do ya want for nothing?".utf8).withUnsafeBytes { try hmac.update($0) }
        var output = [UInt8](repeating: 0, count: 32)
        try output.withUnsafeMutableBytes { try hmac.finish(into: $0) }
        return output.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test func hmacContextsCreatedConcurrentlyAllUseSHA256() async throws {
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    var last = ""
                    for _ in 0..<20 { last = try Self.rfc4231Case2() }
                    return last
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0 == Self.expected })
    }
}
