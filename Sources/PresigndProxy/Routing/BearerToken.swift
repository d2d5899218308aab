import PresigndHTTP1

/// `Authorization: Bearer TOKEN`: the presign API's admin token, and the proxy's named principals (issue 19 §5).
enum BearerToken {
    /// `Bearer TOKEN` (RFC 6750 §2.1; the scheme is case-insensitive).
    static func parse(_ value: String?) -> String? {
        guard let value, value.utf8.count > 7, ASCII.equalsLowercase(value.utf8.prefix(7), "bearer ") else {
            return nil
        }
        let token = Substring(value.utf8.dropFirst(7)).trimmingSpaces()
        return token.isEmpty ? nil : String(token)
    }

    /// Compares without an early exit, so the time taken does not reveal how much of the token matched (it
    /// depends on the expected token's length only).
    static func constantTimeEquals(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
        guard !expected.isEmpty else { return false }
        // The lengths' XOR is kept whole: folded into a byte, lengths 256 apart compared equal (bug b).
        var difference = presented.count ^ expected.count
        for index in expected.indices {
            difference |= Int(expected[index] ^ (index < presented.count ? presented[index] : 0))
        }
        return difference == 0
    }
}
