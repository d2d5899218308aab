/// Incremental, reusable SHA-256 (a `SHA256State`, OpenSSL's low-level `SHA256_CTX`). Not `Sendable`: own one
/// per worker. After `finalizeHex` or `finalize` it is ready for the next message.
public final class SHA256 {
    private var state: SHA256State

    public init() throws(SigV4Error) {
        state = try SHA256State()
    }

    /// Starts a new message, discarding anything fed so far.
    public func reset() throws(SigV4Error) {
        state = try SHA256State()
    }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(SigV4Error) {
        try state.update(bytes)
    }

    public func update(_ bytes: [UInt8]) throws(SigV4Error) {
        try bytes.withRawBytes { (raw) throws(SigV4Error) in try update(raw) }
    }

    /// Writes the 32-byte digest into `output` and resets.
    public func finalize(into output: UnsafeMutableRawBufferPointer) throws(SigV4Error) {
        guard let base = output.baseAddress, output.count >= 32 else { throw .crypto("SHA-256 output too small") }
        try state.finish(into: base)
        try reset()
    }

    /// The digest as 64 lower-case hex digits; resets.
    public func finalizeHex() throws(SigV4Error) -> String {
        var raw: Digest32 = (0, 0, 0, 0)
        return try withUnsafeMutableBytes(of: &raw) { (buffer) throws(SigV4Error) -> String in
            try finalize(into: buffer)
            return ByteTables.lowerHexString(UnsafeRawBufferPointer(buffer))
        }
    }
}

/// SHA-256 of `bytes` as 64 lower-case hex digits.
public func sha256Hex(_ bytes: some Collection<UInt8>) throws(SigV4Error) -> String {
    var raw: Digest32 = (0, 0, 0, 0)
    try sha256(bytes, into: &raw)
    return withUnsafeBytes(of: &raw) { ByteTables.lowerHexString($0) }
}

/// SHA-256 of `bytes` into `digest`.
func sha256(_ bytes: some Collection<UInt8>, into digest: inout Digest32) throws(SigV4Error) {
    var state = try SHA256State()
    let hashed: Result<Void, SigV4Error>? = bytes.withContiguousStorageIfAvailable { buffer in
        Result { () throws(SigV4Error) in try state.update(UnsafeRawBufferPointer(buffer)) }
    }
    switch hashed {
    case .success: break
    case .failure(let error): throw error
    case nil: try Array(bytes).withRawBytes { (raw) throws(SigV4Error) in try state.update(raw) }
    }
    try withUnsafeMutableBytes(of: &digest) { (raw) throws(SigV4Error) in
        guard let base = raw.baseAddress else { return }
        try state.finish(into: base)
    }
}
