import Testing

@testable import PresigndSigV4

/// UriEncode and the S3 canonical path (SIGV4-S3-RULES §2).
@Suite struct URIEncodingTests {
    @Test func uriEncodeKeepsOnlyUnreservedBytes() {
        for byte in UInt8.min...UInt8.max {
            let encoded = URIEncoding.encode([byte], keepingSlash: false)
            let isUnreserved =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~")].contains(byte)
            if isUnreserved {
                #expect(encoded == String(UnicodeScalar(byte)))
            } else {
                let hex = Array("0123456789ABCDEF")
                #expect(encoded == "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)]))
            }
        }
    }

    @Test func slashIsKeptOnlyInPaths() {
        #expect(URIEncoding.encode(Array("a/b".utf8), keepingSlash: true) == "a/b")
        #expect(URIEncoding.encode(Array("a/b".utf8), keepingSlash: false) == "a%2Fb")
        #expect(URIEncoding.encode(Array("a b+c".utf8), keepingSlash: false) == "a%20b%2Bc")
    }

    @Test(arguments: [
        ("/%41", "/A"), ("/a%2cb", "/a%2Cb"), ("/!", "/%21"), ("/'", "/%27"), ("/%2520", "/%2520"),
        ("/a%20b", "/a%20b"), ("/a%2Fb", "/a/b"), ("//", "//"), ("/a/", "/a/"), ("/./a/../b", "/./a/../b"),
        ("", "/"), ("/a+b", "/a%2Bb"), ("/caf%C3%A9", "/caf%C3%A9"), ("/café", "/caf%C3%A9"),
        ("/e\u{301}", "/e%CC%81"), ("/test$file.text", "/test%24file.text"), ("/~-_.", "/~-_."),
    ])
    func canonicalPathDecodesOnceAndEncodesAgain(raw: String, expected: String) throws {
        #expect(try URIEncoding.canonicalPath(rawPath: Array(raw.utf8)) == expected)
    }

    @Test func plusIsSpaceOnlyWhenAsked() throws {
        #expect(try URIEncoding.canonicalPath(rawPath: Array("/a+b".utf8), plusIsSpace: true) == "/a%20b")
        #expect(try URIEncoding.canonicalPath(rawPath: Array("/a%2Bb".utf8), plusIsSpace: true) == "/a%2Bb")
    }

    @Test(arguments: ["/%", "/%4", "/%zz", "/a%g1", "/%%41"])
    func rejectsMalformedPercentEncoding(raw: String) {
        #expect(throws: SigV4Error.self) { try URIEncoding.canonicalPath(rawPath: Array(raw.utf8)) }
    }

    @Test func reportsOffsetOfMalformedEscape() {
        #expect(throws: SigV4Error.malformedPercentEncoding(offset: 2)) {
            try URIEncoding.decodePath(Array("/a%4".utf8))
        }
    }

    @Test(arguments: ["/%FF", "/%C3", "/%C0%AF", "/%ED%A0%80"])
    func rejectsInvalidUTF8(raw: String) {
        #expect(throws: SigV4Error.invalidUTF8) { try URIEncoding.canonicalPath(rawPath: Array(raw.utf8)) }
    }

    @Test func decodePathReturnsRawBytes() throws {
        #expect(try URIEncoding.decodePath(Array("/b/k%2Fx%FF".utf8)) == Array("/b/k/x".utf8) + [0xFF])
    }
}
