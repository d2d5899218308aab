/// HMAC-SHA256 (RFC 2104) of a whole message, for callers outside the signer (the HS256 JWTs of R2 temporary
/// credentials). The one HMAC implementation is `HMACKey`; this keys it once and authenticates once.
public func hmacSHA256(key: some Collection<UInt8>, message: some Collection<UInt8>) throws(SigV4Error) -> [UInt8] {
    let key = Array(key)
    let message = Array(message)
    var output: Digest32 = (0, 0, 0, 0)
    try key.withRawBytes { (keyBytes) throws(SigV4Error) in
        var keyed = try HMACKey(key: keyBytes)
        defer { keyed.wipe() }
        try message.withRawBytes { (bytes) throws(SigV4Error) in try keyed.authenticate(bytes, into: &output) }
    }
    return withUnsafeBytes(of: &output) { Array($0) }
}

/// SHA-256 of `bytes`, the 32 raw digest bytes.
public func sha256Digest(_ bytes: some Collection<UInt8>) throws(SigV4Error) -> [UInt8] {
    var raw: Digest32 = (0, 0, 0, 0)
    try sha256(bytes, into: &raw)
    return withUnsafeBytes(of: &raw) { Array($0) }
}
