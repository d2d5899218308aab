/// The reusable buffers of one header signature.
///
/// The `Signer` is per thread and keeps one behind a pointer; `withScratch` lends it in place for the duration
/// of a call, so every append finds a uniquely referenced buffer (no copy-on-write, no exclusivity check per
/// access) and keeps its capacity: a warm signer allocates nothing for its intermediate stages.
struct SigningScratch {
    /// Lower-cased header names (all of the request's, then the signer's own) and the entries to sign.
    var canonical = CanonicalHeaders()
    /// Per request header, the range of its lower-cased name in `canonical.names`.
    var nameRanges: [Range<Int>] = []
    /// Lower-cased names listed in `Connection` headers, back to back, and their ranges (§4.4).
    var connectionTokens: [UInt8] = []
    var connectionRanges: [Range<Int>] = []
    /// Indices of the request's headers that are sent, in arrival order.
    var kept: [Int] = []
    var query = URIEncoding.QueryScratch()
    /// §1 CanonicalRequest, StringToSign and the `Authorization` value.
    var canonicalRequest = ByteWriter()
    var stringToSign = ByteWriter()
    var authorization = ByteWriter()
    /// The upstream head `signHead` assembles before one copy into the caller's buffer.
    var head = ByteWriter()

    mutating func removeAll() {
        canonical.removeAll()
        nameRanges.removeAll(keepingCapacity: true)
        connectionTokens.removeAll(keepingCapacity: true)
        connectionRanges.removeAll(keepingCapacity: true)
        kept.removeAll(keepingCapacity: true)
        canonicalRequest.removeAll()
        stringToSign.removeAll()
        authorization.removeAll()
        head.removeAll()
    }

    /// Frees the `ByteWriter`s (the owning `Signer`'s deinit).
    mutating func deallocate() {
        canonical.deallocate()
        canonicalRequest.deallocate()
        stringToSign.deallocate()
        authorization.deallocate()
        head.deallocate()
    }

    /// `true` when the lower-case `name` was listed in a `Connection` header.
    func isConnectionListed(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !connectionRanges.isEmpty else { return false }
        return connectionTokens.withUnsafeBufferPointer { tokens in
            connectionRanges.contains { range in
                ASCIIBytes.equal(UnsafeBufferPointer(rebasing: tokens[range]), name)
            }
        }
    }
}
