/// `withUnsafeBytes` for byte arrays with a typed-throws body (the standard library's is `rethrows`, which
/// erases the error type).
extension Array where Element == UInt8 {
    func withRawBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(SigV4Error) -> Result) throws(SigV4Error)
        -> Result
    {
        try withUnsafeBytes { raw in Swift.Result { () throws(SigV4Error) in try body(raw) } }.get()
    }
}
