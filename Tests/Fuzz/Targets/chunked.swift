import PresigndHTTP1

/// libFuzzer target `chunked`: A chunked request body after a fixed head (ChunkedDecoder through RequestDecoder).
/// `HTTP1Fuzz.fuzzChunked` decodes the input whole, in segments and trickled, and checks the decoder contract.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    HTTP1Fuzz.fuzzChunked(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
