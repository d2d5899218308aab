import PresigndHTTP1
import PresigndTestSupport
import Testing

@Suite struct AWSChunkedDecoderTests {
    /// The payload shape of the S3 "Signature Calculations for the Authorization Header: Transferring Payload in
    /// Multiple Chunks" example: 64 KiB, 1 KiB, then the final chunk, each with a chunk-signature.
    @Test func decodesSignedStreamingPayload() {
        let data = [UInt8](repeating: UInt8(ascii: "a"), count: 66560)
        var body = Array(
            "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n".utf8)
        body += data[..<65536] + Array("\r\n".utf8)
        body += Array("400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n".utf8)
        body += data[65536...] + Array("\r\n".utf8)
        body += Array("0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n".utf8)
        let (t, decoder) = decodeAWSChunked(body)
        #expect(t.error == nil)
        #expect(t.messages[0].body == data)
        #expect(t.messages[0].isComplete && decoder.isComplete)
        #expect(decoder.decodedByteCount == 66560)
        #expect(decoder.trailers.isEmpty)
    }

    @Test func collectsUnsignedPayloadChecksumTrailer() {
        let body = Array("5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n".utf8)
        let (t, decoder) = decodeAWSChunked(body)
        #expect(t.error == nil)
        #expect(t.messages[0].bodyText == "hello world")
        #expect(decoder.trailers["x-amz-checksum-crc32"] == "DUoRhQ==")
        #expect(decoder.isComplete)
    }

    @Test func collectsSignedTrailers() {
        let body = Array(
            ("5;chunk-signature=aa\r\nhello\r\n0;chunk-signature=bb\r\n"
                + "x-amz-checksum-crc32c:sOO8/Q==\r\nx-amz-trailer-signature:cc\r\n\r\n").utf8)
        let (t, decoder) = decodeAWSChunked(body)
        #expect(t.error == nil)
        #expect(decoder.trailers == ["x-amz-checksum-crc32c": "sOO8/Q==", "x-amz-trailer-signature": "cc"])
    }

    @Test(arguments: [
        ("5\r\nhelloXX0\r\n\r\n", HTTPParseError.invalidChunkFraming),
        ("g\r\n", .invalidChunkSize),
        (";chunk-signature=aa\r\n", .invalidChunkSize),
        ("ffffffffffffffffff\r\n", .chunkSizeOverflow),
        ("0\r\nx-amz-checksum-crc32 : x\r\n\r\n", .whitespaceBeforeColon),
        ("0\r\n\r\ntrailing", .invalidChunkFraming),
    ])
    func rejectsMalformedPayload(body: String, error: HTTPParseError) {
        #expect(decodeAWSChunked(Array(body.utf8)).transcript.error == error)
    }

    @Test func waitsOnATruncatedPayload() {
        let (t, decoder) = decodeAWSChunked(Array("5\r\nhel".utf8))
        #expect(t.error == nil)
        #expect(t.messages[0].bodyText == "hel")
        #expect(!decoder.isComplete)
    }
}
