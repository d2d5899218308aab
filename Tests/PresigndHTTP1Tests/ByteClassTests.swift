import Testing

@testable import PresigndHTTP1

/// The constant-mask byte classes the field-line loop uses agree with the RFC definitions for every byte.
@Suite struct ByteClassTests {
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
