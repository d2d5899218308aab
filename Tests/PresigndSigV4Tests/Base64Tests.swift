import PresigndSigV4
import Testing

/// Base64 and base64url (RFC 4648), and the public HMAC-SHA256 / SHA-256 helpers the R2 minter uses.
@Suite struct Base64Tests {
    /// RFC 4648 §10.
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ])
    func encodesTheRFC4648Vectors(input: String, expected: String) {
        #expect(Base64.encode(input.utf8) == expected)
    }

    @Test func urlAlphabetUsesDashAndUnderscoreWithoutPadding() {
        #expect(Base64.encodeURL([0xFB, 0xFF]) == "-_8")
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.encodeURL("foob".utf8) == "Zm9vYg")
    }

    /// RFC 7515 Appendix A.1: the JWS protected header's base64url form.
    @Test func encodesTheJWSExampleHeader() {
        let header = Array("{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}".utf8)
        #expect(Base64.encodeURL(header) == "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9")
    }

    /// RFC 4231 §4.3 (test case 2) through the public one-shot HMAC.
    @Test func hmacMatchesRFC4231CaseTwo() throws {
        let mac = try hmacSHA256(key: "Jefe".utf8, message: "what do ya want for nothing?".utf8)
        #expect(Base64.encode(mac) == "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=")
    }

    @Test func sha256DigestMatchesTheHexForm() throws {
        let digest = try sha256Digest("abc".utf8)
        #expect(digest.count == 32)
        #expect(try sha256Hex("abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest.prefix(4) == [0xBA, 0x78, 0x16, 0xBF])
    }
}
