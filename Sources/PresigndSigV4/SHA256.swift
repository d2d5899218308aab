internal import COpenSSL

/// Incremental, reusable SHA-256 (OpenSSL 3 `EVP_MD_CTX` with a fetched `EVP_MD`). Not `Sendable`: own one
/// per worker. After `finalizeHex` or `finalize` it is ready for the next message.
public final class SHA256 {
    private let digest: OpaquePointer
    private let context: OpaquePointer

    public init() throws(SigV4Error) {
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else { throw OpenSSLError.drain("EVP_MD_fetch(SHA256)") }
        guard let context = EVP_MD_CTX_new() else {
            EVP_MD_free(digest)
            throw OpenSSLError.drain("EVP_MD_CTX_new")
        }
        self.digest = digest
        self.context = context
        try reset()
    }

    deinit {
        EVP_MD_CTX_free(context)
        EVP_MD_free(digest)
    }

    /// Starts a new message, discarding anything fed so far.
    public func reset() throws(SigV4Error) {
        guard EVP_DigestInit_ex2(context, digest, nil) == 1 else { throw OpenSSLError.drain("EVP_DigestInit_ex2") }
    }

    public func update(_ bytes: UnsafeRawBufferPointer) throws(SigV4Error) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else { throw OpenSSLError.drain("EVP_DigestUpdate") }
    }

    public func update(_ bytes: [UInt8]) throws(SigV4Error) {
        try bytes.withRawBytes { (raw) throws(SigV4Error) in try update(raw) }
    }

    /// Writes the 32-byte digest into `output` and resets.
    public func finalize(into output: UnsafeMutableRawBufferPointer) throws(SigV4Error) {
        guard let base = output.baseAddress, output.count >= 32 else { throw .crypto("SHA-256 output too small") }
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, base.assumingMemoryBound(to: UInt8.self), &length) == 1, length == 32
        else { throw OpenSSLError.drain("EVP_DigestFinal_ex") }
        try reset()
    }

    /// The digest as 64 lower-case hex digits; resets.
    public func finalizeHex() throws(SigV4Error) -> String {
        var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return try withUnsafeMutableBytes(of: &raw) { (buffer) throws(SigV4Error) -> String in
            try finalize(into: buffer)
            return ByteTables.lowerHexString(UnsafeRawBufferPointer(buffer))
        }
    }
}

/// SHA-256 of `bytes` as 64 lower-case hex digits (one-shot `EVP_Digest`).
public func sha256Hex(_ bytes: some Collection<UInt8>) throws(SigV4Error) -> String {
    let contiguous = Array(bytes)
    var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    return try withUnsafeMutableBytes(of: &raw) { (output) throws(SigV4Error) -> String in
        var length: UInt32 = 0
        let status = contiguous.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                &length, EVP_sha256(), nil)
        }
        guard status == 1, length == 32 else { throw OpenSSLError.drain("EVP_Digest") }
        return ByteTables.lowerHexString(UnsafeRawBufferPointer(output))
    }
}
