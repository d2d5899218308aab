internal import COpenSSL

/// A reusable HMAC-SHA256 context (OpenSSL 3 `EVP_MAC`). Not `Sendable`: one per signer.
///
/// `rekey` sets a key; `restart` re-initialises with the key already set, which skips the ipad/opad
/// setup (OpenSSL 3 `hmac_init` with a NULL key reuses the current key).
final class HMACSHA256 {
    private let mac: OpaquePointer
    private let context: OpaquePointer

    init() throws(SigV4Error) {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { throw OpenSSLError.drain("EVP_MAC_fetch(HMAC)") }
        guard let context = EVP_MAC_CTX_new(mac) else {
            EVP_MAC_free(mac)
            throw OpenSSLError.drain("EVP_MAC_CTX_new")
        }
        self.mac = mac
        self.context = context
        // Both the parameter's key and its value must stay alive until EVP_MAC_CTX_set_params returns (DESIGN
        // §7): passing the imported `OSSL_MAC_PARAM_DIGEST` String straight to the constructor gave it a
        // temporary C string that was freed before set_params read it (ASan: heap-use-after-free).
        let digestKey = Array(OSSL_MAC_PARAM_DIGEST.utf8CString)
        var digestName = Array("SHA256".utf8CString)
        let status = digestKey.withUnsafeBufferPointer { key -> Int32 in
            digestName.withUnsafeMutableBufferPointer { name -> Int32 in
                var params = [
                    OSSL_PARAM_construct_utf8_string(key.baseAddress, name.baseAddress, 0),
                    OSSL_PARAM_construct_end(),
                ]
                return EVP_MAC_CTX_set_params(context, &params)
            }
        }
        guard status == 1 else { throw OpenSSLError.drain("EVP_MAC_CTX_set_params(digest)") }
    }

    deinit {
        EVP_MAC_CTX_free(context)
        EVP_MAC_free(mac)
    }

    /// Starts a MAC with a new key.
    func rekey(_ key: UnsafeRawBufferPointer) throws(SigV4Error) {
        guard let base = key.baseAddress, key.count > 0 else { throw .crypto("HMAC key is empty") }
        guard EVP_MAC_init(context, base.assumingMemoryBound(to: UInt8.self), key.count, nil) == 1 else {
            throw OpenSSLError.drain("EVP_MAC_init")
        }
    }

    /// Starts a MAC with the key of the previous `rekey`.
    func restart() throws(SigV4Error) {
        guard EVP_MAC_init(context, nil, 0, nil) == 1 else { throw OpenSSLError.drain("EVP_MAC_init(reuse)") }
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws(SigV4Error) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), bytes.count) == 1 else {
            throw OpenSSLError.drain("EVP_MAC_update")
        }
    }

    /// Writes the 32-byte MAC into `output` (which must hold 32 bytes).
    func finish(into output: UnsafeMutableRawBufferPointer) throws(SigV4Error) {
        guard let base = output.baseAddress, output.count >= 32 else { throw .crypto("HMAC output too small") }
        var length = 0
        guard EVP_MAC_final(context, base.assumingMemoryBound(to: UInt8.self), &length, output.count) == 1,
            length == 32
        else { throw OpenSSLError.drain("EVP_MAC_final") }
    }

    /// HMAC(key, message) into a 32-byte array, for the key derivation (§1).
    func mac(key: [UInt8], message: some StringProtocol) throws(SigV4Error) -> [UInt8] {
        var output: [UInt8] = []
        try key.withRawBytes { (raw) throws(SigV4Error) in try rekey(raw) }
        try Array(message.utf8).withRawBytes { (raw) throws(SigV4Error) in try update(raw) }
        var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &raw) { (buffer) throws(SigV4Error) in
            try finish(into: buffer)
            output = Array(UnsafeRawBufferPointer(buffer))
        }
        return output
    }
}
