import PresigndHTTP1

/// libFuzzer target `request`: HTTP/1.1 requests, pipelined, with any body framing (RequestDecoder).
/// `HTTP1Fuzz.fuzzRequest` decodes the input whole, in segments and trickled, and checks the decoder contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    HTTP1Fuzz.fuzzRequest(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
