/// `withUnsafeBytes` for byte arrays with a typed-throws body (the standard library's is `rethrows`, which
/// erases the error type).
extension Array where Element == UInt8 {
    func withRawBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(SigV4Error) -> Result) throws(SigV4Error)
        -> Result
    {
        try withUnsafeBytes { raw in Swift.Result { () throws(SigV4Error) in try body(raw) } }.get()
    }
}

extension String {
    /// `withUTF8` with a typed-throws body, on raw bytes. Native Swift strings are already contiguous UTF-8,
    /// so this neither copies nor allocates.
    mutating func withRawUTF8<Result>(_ body: (UnsafeRawBufferPointer) throws(SigV4Error) -> Result)
        throws(SigV4Error) -> Result
    {
        try withUTF8 { bytes in Swift.Result { () throws(SigV4Error) in try body(UnsafeRawBufferPointer(bytes)) } }
            .get()
    }
}
