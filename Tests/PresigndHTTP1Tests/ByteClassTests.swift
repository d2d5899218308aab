import Testing

@testable import PresigndHTTP1

/// The constant-mask byte classes the field-line loop uses agree with the RFC definitions for every byte.
@Suite struct ByteClassTests {
    /// The contiguous `equalsLowercase` agrees with the sequence version: every byte value in every position of
    /// a literal's length, other lengths, and each letter in either case.
    @Test func contiguousEqualsLowercaseAgreesWithTheSequenceVersion() {
        let literal: StaticString = "content-length"
        let base = Array("Content-Length".utf8)
        func check(_ bytes: [UInt8]) {
            let contiguous = bytes.withUnsafeBufferPointer { ASCII.equalsLowercase($0, literal) }
            #expect(contiguous == ASCII.equalsLowercase(bytes[...], literal), "\(bytes)")
        }
        check(base)
        check(Array(base.dropLast()))
        check(base + [0x20])
        check([])
        for position in base.indices {
            for byte in UInt8.min...UInt8.max {
                var bytes = base
                bytes[position] = byte
                check(bytes)
            }
        }
        let upper = Array("CONTENT-LENGTH".utf8)
        #expect(upper.withUnsafeBufferPointer { ASCII.equalsLowercase($0, literal) })
    }

    @Test func foldsExactlyTheASCIILettersOfEveryByte() {
        for byte in UInt8.min...UInt8.max {
            let isUpper = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
            let isLower = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            #expect(ASCII.lowercased(byte) == (isUpper ? byte + 32 : byte), "byte \(byte)")
            #expect(ASCII.uppercased(byte) == (isLower ? byte - 32 : byte), "byte \(byte)")
        }
    }

    /// Only A–Z and a–z fold: the Kelvin sign (U+212A) and `ß` stay, unlike `String.lowercased()`/`uppercased()`.
    @Test func foldsStringsOnlyInASCII() {
        #expect(ASCII.lowercased("X-Amz-Date: \u{212A}Ä") == "x-amz-date: \u{212A}Ä")
        #expect(ASCII.uppercased("get ßä") == "GET ßä")
        #expect(ASCII.lowercased("already-lower") == "already-lower")
        #expect(ASCII.equalsLowercase("Content-TYPE", "content-type"))
        #expect(!ASCII.equalsLowercase("\u{212A}eep-alive", "keep-alive"))
        #expect(ASCII.equalsIgnoringCase("ETag", "etag") && !ASCII.equalsIgnoringCase("ETag", "etags"))
    }

    /// The prefix test compares in place, ignoring ASCII case only, and never reads past a short name.
    @Test func aLowercasePrefixIsFoundInAnyCaseAndOnlyInASCII() {
        #expect(ASCII.hasLowercasePrefix("X-Amz-Server-Side-Encryption-Customer-Key", "x-amz-server-side-encryption-"))
        #expect(ASCII.hasLowercasePrefix("x-amz-checksum-crc32", "x-amz-checksum-"))
        #expect(ASCII.hasLowercasePrefix("IF-", "if-"))
        #expect(!ASCII.hasLowercasePrefix("If", "if-"))
        #expect(!ASCII.hasLowercasePrefix("", "if-"))
        #expect(!ASCII.hasLowercasePrefix("X-Amz-Date", "x-amz-checksum-"))
        #expect(!ASCII.hasLowercasePrefix("\u{212A}-Amz", "k-amz"))
        // A bridged-like (non-contiguous) view takes the sequence path with the same answers.
        let sub = Substring("If-Match").utf8
        #expect(ASCII.equalsLowercase(sub.prefix(3), "if-"))
    }

    @Test func tokenBytesAreExactlyTchar() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(ASCII.isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
            #expect(ASCII.isTokenChar(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func fieldValueBytesAreVcharSpaceTabAndObsText() {
        for byte in UInt8.min...UInt8.max {
            let allowed = (0x21...0x7E).contains(byte) || byte == 0x20 || byte == 0x09 || byte >= 0x80
            #expect(ASCII.isFieldValueByte(byte) == allowed, "byte \(byte)")
        }
    }
}

/// Interned words are exactly the strings `String(decoding:)` would build, and only exact spellings are interned.
@Suite struct InternedStringTests {
    @Test(arguments: [
        "OK", "Ok", "GET", "get", "PUT", "*/*", "Host", "host", "HEAD", "Date", "ETag", "Range", "close", "Close",
        "Accept", "DELETE", "Server", "User-Agent", "Connection", "connection", "keep-alive", "Keep-Alive",
        "Content-Type", "Content-Length", "content-length", "Partial Content", "", "X", "Not Found", "é",
    ])
    func matchesTheDecodedString(word: String) {
        let bytes = Array("<\(word)>".utf8)
        bytes.withUnsafeBufferPointer { buffer in
            let range = 1..<(buffer.count - 1)
            #expect(ASCII.internedString(buffer, range) == ASCII.string(buffer, range))
            #expect(ASCII.internedString(buffer, range).utf8.elementsEqual(word.utf8))
        }
    }
}
