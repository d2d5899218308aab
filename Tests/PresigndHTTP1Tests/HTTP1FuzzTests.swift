import PresigndFuzzDrivers
import PresigndHTTP1
import PresigndTestSupport
import Testing

/// Runs the libFuzzer entry points over the test tables and over seeded mutations of them, so their invariants
/// (contract, progress, identical results however the bytes are split) hold before a fuzzer ever runs.
@Suite struct HTTP1FuzzTests {
    static let seeds: [String] = [
        "GET / HTTP/1.1\r\nHost: h\r\n\r\nPUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
        "PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: x\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.0 200 OK\r\n\r\nrest",
        "5;chunk-signature=aa\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n",
    ]

    @Test func entryPointsHoldOnSeedsAndMutations() {
        var random = SplitMix(seed: 0x5EED)
        var corpus = Self.seeds.map { Array($0.utf8) }
        corpus += RequestDecoderRejectionTests.syntax.map { Array($0.request.utf8) }
        corpus += RequestDecoderRejectionTests.chunks.map { Array($0.request.utf8) }
        for seed in Self.seeds {
            for _ in 0..<300 {
                var bytes = Array(seed.utf8)
                for _ in 0..<(1 + Int(random.next() % 4)) {
                    let index = Int(random.next() % UInt64(bytes.count))
                    switch random.next() % 4 {
                    case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                    case 1: bytes.remove(at: index)
                    case 2: bytes.insert(Array("\r\n:; 0f".utf8)[Int(random.next() % 7)], at: index)
                    default: bytes.insert(contentsOf: bytes[index...].prefix(8), at: index)
                    }
                    if bytes.isEmpty { bytes = [0] }
                }
                corpus.append(bytes)
            }
        }
        for input in corpus {
            input.withUnsafeBytes { data in
                HTTP1Fuzz.fuzzRequest(data)
                HTTP1Fuzz.fuzzResponse(data)
                HTTP1Fuzz.fuzzChunked(data)
                HTTP1Fuzz.fuzzAWSChunked(data)
            }
        }
    }

    @Test func entryPointsAcceptEmptyInput() {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        HTTP1Fuzz.fuzzRequest(empty)
        HTTP1Fuzz.fuzzResponse(empty)
        HTTP1Fuzz.fuzzChunked(empty)
        HTTP1Fuzz.fuzzAWSChunked(empty)
    }
}
