import PresigndHTTP1

/// libFuzzer target `response`: HTTP/1.1 responses, interim heads included; the first byte picks GET or HEAD (ResponseDecoder).
/// `HTTP1Fuzz.fuzzResponse` decodes the input whole, in segments and trickled, and checks the decoder contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    HTTP1Fuzz.fuzzResponse(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
