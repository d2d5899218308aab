import Testing

@testable import PresigndSigV4

/// x-amz-date conversions without Foundation (SIGV4-S3-RULES §6).
@Suite struct AmzDateTests {
    @Test(arguments: [
        (0, "19700101T000000Z"), (1_440_938_160, "20150830T123600Z"), (1_369_353_600, "20130524T000000Z"),
        (1_709_164_800, "20240229T000000Z"), (1_709_251_199, "20240229T235959Z"), (951_782_400, "20000229T000000Z"),
        (4_107_542_400, "21000301T000000Z"), (4_107_542_399, "21000228T235959Z"), (-1, "19691231T235959Z"),
        (253_402_300_799, "99991231T235959Z"),
    ])
    func convertsBothWays(epoch: Int, text: String) throws {
        #expect(AmzDate(epochSeconds: epoch).string == text)
        #expect(AmzDate(parsing: text)?.epochSeconds == epoch)
        #expect(AmzDate(epochSeconds: epoch).dateStamp == String(text.prefix(8)))
    }

    @Test(arguments: [
        "20230229T000000Z", "21000229T000000Z", "20260431T000000Z", "20261301T000000Z", "20260001T000000Z",
        "20260301T240000Z", "20260301T006000Z", "20260301T000060Z", "20260301 000000Z", "2026030T1000000Z",
        "20260301T000000", "2026-03-01T00:00:00Z", "",
    ])
    func rejectsInvalidDates(text: String) {
        #expect(AmzDate(parsing: text) == nil)
    }

    @Test func scopeDateComesFromTheSameString() throws {
        let date = try #require(AmzDate(parsing: "20261231T235959Z"))
        #expect(date.dateStamp == "20261231")
        #expect(date.iso8601 == "2026-12-31T23:59:59Z")
    }

    @Test func nowIsPlausible() {
        let now = AmzDate.now()
        #expect(now.epochSeconds > 1_700_000_000)
        #expect(AmzDate(parsing: now.string)?.epochSeconds == now.epochSeconds)
    }

    @Test func payloadHashReadsClientValues() {
        #expect(PayloadHash(clientValue: "UNSIGNED-PAYLOAD") == .unsigned)
        #expect(PayloadHash(clientValue: PayloadHash.emptySHA256.uppercased()) == .emptyBody)
        #expect(
            PayloadHash(clientValue: String(repeating: "A", count: 64))
                == .sha256(hex: String(repeating: "a", count: 64)))
        #expect(PayloadHash(clientValue: String(repeating: "g", count: 64)) == nil)
        #expect(PayloadHash(clientValue: "abc") == nil)
        #expect(PayloadHash(clientValue: "STREAMING-UNSIGNED-PAYLOAD-TRAILER") == .streamingUnsignedTrailer)
    }

    @Test func awsChunkedLengths() {
        #expect(AWSChunked.encodedLength(decodedLength: 0, chunkSize: 65_536) == 86)
        #expect(AWSChunked.encodedLength(decodedLength: 66_560, chunkSize: 65_536) == 66_824)
        // 3\r\nabc\r\n + 0\r\n + trailer + \r\n
        #expect(
            AWSChunked.unsignedTrailerEncodedLength(decodedLength: 3, chunkSize: 8192, trailerLength: 10) == 8 + 5 + 10)
    }

    @Test func readsIMFFixdates() {
        #expect(AmzDate(httpDate: "Sun, 06 Nov 1994 08:49:37 GMT")?.epochSeconds == 784_111_777)
        #expect(AmzDate(httpDate: "Thu, 01 Jan 1970 00:00:00 GMT")?.epochSeconds == 0)
        #expect(AmzDate(httpDate: "Sat, 29 Feb 2028 23:59:59 GMT")?.string == "20280229T235959Z")
    }

    @Test(arguments: [
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:49:37 GMT", "",
    ])
    func refusesOtherDateForms(text: String) {
        #expect(AmzDate(httpDate: text) == nil)
    }
}
