import PresigndHTTP1

/// libFuzzer target `aws-chunked`: An aws-chunked payload with chunk signatures and trailers (AWSChunkedDecoder).
/// `HTTP1Fuzz.fuzzAWSChunked` decodes the input whole, in segments and trickled, and checks the decoder contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    HTTP1Fuzz.fuzzAWSChunked(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
