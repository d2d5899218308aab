internal import COpenSSL
internal import PresigndOpenSSL

/// 32 bytes on the stack: a SHA-256 digest or an HMAC-SHA256 value.
typealias Digest32 = (UInt64, UInt64, UInt64, UInt64)

/// A SHA-256 state as a value (OpenSSL's low-level `SHA256_CTX`, through the `presignd_sha256_*` shims).
///
/// Copying it forks the hash, which is how `HMACKey` reuses its keyed states. It runs the same SHA-NI block
/// function as EVP without EVP's dispatch, and lives on the stack or inline in its owner: no allocation.
struct SHA256State {
    private var context = SHA256_CTX()

    init() throws(SigV4Error) {
        guard presignd_sha256_init(&context) == 1 else { throw .crypto(OpenSSLError.drain("SHA256_Init").description) }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) throws(SigV4Error) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard presignd_sha256_update(&context, base, bytes.count) == 1 else {
            throw .crypto(OpenSSLError.drain("SHA256_Update").description)
        }
    }

    /// Writes the 32-byte digest to `output`. The state is spent afterwards; start a new one to hash again.
    mutating func finish(into output: UnsafeMutableRawPointer) throws(SigV4Error) {
        guard presignd_sha256_final(output.assumingMemoryBound(to: UInt8.self), &context) == 1 else {
            throw .crypto(OpenSSLError.drain("SHA256_Final").description)
        }
    }

    /// Overwrites the state with zeros (`OPENSSL_cleanse`, which the optimizer cannot drop): a keyed state is
    /// as good as the key for forging MACs.
    mutating func wipe() {
        OPENSSL_cleanse(&context, MemoryLayout<SHA256_CTX>.size)
    }
}

/// Zeroes secret bytes on the stack in a way the optimizer cannot drop.
func wipeSecret(_ bytes: UnsafeMutableRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    OPENSSL_cleanse(base, bytes.count)
}
