internal import COpenSSL
internal import PresigndOpenSSL

/// An incremental message digest through OpenSSL's EVP interface (`EVP_MD_CTX`), for the payload checksums that
/// are not on the signing path (SHA-1 and SHA-256 of upload bodies). Owns its context; not `Sendable`.
final class EVPDigest {
    enum Kind {
        case sha1
        case sha256
    }

    private let context: OpaquePointer
    private var isFinished = false

    init(_ kind: Kind) throws(SigV4Error) {
        guard let context = EVP_MD_CTX_new() else { throw .crypto(OpenSSLError.drain("EVP_MD_CTX_new").description) }
        let md = kind == .sha1 ? EVP_sha1() : EVP_sha256()
        guard EVP_DigestInit_ex(context, md, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw .crypto(OpenSSLError.drain("EVP_DigestInit_ex").description)
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws(SigV4Error) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard !isFinished, EVP_DigestUpdate(context, base, bytes.count) == 1 else {
            throw .crypto(OpenSSLError.drain("EVP_DigestUpdate").description)
        }
    }

    /// The digest; the context is spent afterwards.
    func finish() throws(SigV4Error) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard !isFinished, EVP_DigestFinal_ex(context, &digest, &length) == 1 else {
            throw .crypto(OpenSSLError.drain("EVP_DigestFinal_ex").description)
        }
        isFinished = true
        return Array(digest[..<Int(length)])
    }
}
