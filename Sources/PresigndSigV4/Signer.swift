/// The SigV4 signer for one set of credentials, one region and one service (S3/R2 rules).
///
/// Not `Sendable`: make one per worker thread. It caches the keyed HMAC state of the signing key `kSigning` per
/// scope date (§6: it depends only on secret, date, region and service), keeping the current and the previous
/// day so requests straddling UTC midnight do not thrash it.
public final class Signer {
    public let credentials: Credentials
    public let region: String
    public let service: String
    /// When false every signature derives the key again (benchmarks, tests).
    public let cachesSigningKey: Bool

    /// One cached signing key: HMAC state keyed with kSigning for a `yyyymmdd` date stamp.
    private struct CachedKey {
        var dateStamp: String
        var key: HMACKey
    }

    /// At most two entries: today and yesterday (§6: drop the key after UTC midnight).
    private var keyCache: [CachedKey] = []
    /// The last scope built, per date stamp (one a day; saves four concatenations a request).
    private var scopeCache: (dateStamp: String, scope: String)?
    /// `scopeCache`'s scope as bytes, in a buffer the signer owns: appending it twice a request costs no
    /// reference counting (an array read out of an optional tuple is retained and released around each use).
    private var scopeBytes = ByteWriter()
    /// Reusable buffers of the header signer (see `SigningScratch`), behind a pointer the Signer owns:
    /// `withScratch` hands them out in place, with no exclusivity check and no temporary to build and drop.
    let scratchStorage: UnsafeMutablePointer<SigningScratch> = {
        let storage = UnsafeMutablePointer<SigningScratch>.allocate(capacity: 1)
        storage.initialize(to: SigningScratch())
        return storage
    }()

    /// - Throws: `SigV4Error.crypto` when OpenSSL cannot provide SHA-256.
    public init(
        credentials: Credentials, region: String, service: String = "s3", cachesSigningKey: Bool = true
    ) throws(SigV4Error) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.cachesSigningKey = cachesSigningKey
        _ = try SHA256State()  // fail here, not on the first request
    }

    deinit {
        var (keys, bytes) = (keyCache, scopeBytes)  // locals: no access to the properties spans a call
        for index in keys.indices { keys[index].key.wipe() }
        bytes.deallocate()
        scratchStorage.pointee.deallocate()
        scratchStorage.deinitialize(count: 1)
        scratchStorage.deallocate()
    }

    /// kSigning for a `yyyymmdd` date stamp (§1 key derivation), derived afresh. Tests only: the signer itself
    /// keeps the keyed HMAC state, never the key bytes.
    func signingKey(dateStamp: String) throws(SigV4Error) -> [UInt8] {
        var key: Digest32 = (0, 0, 0, 0)
        defer { withUnsafeMutableBytes(of: &key) { wipeSecret($0) } }
        try deriveSigningKey(dateStamp: dateStamp, into: &key)
        return withUnsafeBytes(of: &key) { Array($0) }
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request") (§1).
    private func deriveSigningKey(dateStamp: String, into key: inout Digest32) throws(SigV4Error) {
        let prefix: StaticString = "AWS4"
        var secret = credentials.secretAccessKey.exposedValue
        var keyed = try secret.withRawUTF8 { (raw) throws(SigV4Error) in
            try HMACKey(
                prefix: UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount), key: raw)
        }
        defer { keyed.wipe() }
        var message = dateStamp
        try message.withRawUTF8 { (raw) throws(SigV4Error) in try keyed.authenticate(raw, into: &key) }  // kDate
        for part in [region, service, "aws4_request"] {  // kRegion, kService, kSigning
            keyed.wipe()
            keyed = try withUnsafeBytes(of: &key) { (raw) throws(SigV4Error) in try HMACKey(key: raw) }
            message = part
            try message.withRawUTF8 { (raw) throws(SigV4Error) in try keyed.authenticate(raw, into: &key) }
        }
    }

    /// HMAC(kSigning, message) into `output` (§1 Signature), with the cached keyed state when allowed.
    func authenticate(_ message: UnsafeRawBufferPointer, dateStamp: String, into output: inout Digest32)
        throws(SigV4Error)
    {
        if cachesSigningKey, let index = keyCache.firstIndex(where: { $0.dateStamp == dateStamp }) {
            try keyCache[index].key.authenticate(message, into: &output)
            return
        }
        var kSigning: Digest32 = (0, 0, 0, 0)
        defer { withUnsafeMutableBytes(of: &kSigning) { wipeSecret($0) } }
        try deriveSigningKey(dateStamp: dateStamp, into: &kSigning)
        var keyed = try withUnsafeBytes(of: &kSigning) { (raw) throws(SigV4Error) in try HMACKey(key: raw) }
        try keyed.authenticate(message, into: &output)
        if cachesSigningKey {
            // Keep today and yesterday only (§6: drop the key after UTC midnight).
            if keyCache.count >= 2 {
                keyCache[0].key.wipe()
                keyCache.removeFirst()
            }
            keyCache.append(CachedKey(dateStamp: dateStamp, key: keyed))
        }
        keyed.wipe()
    }

    /// The scope `yyyymmdd/region/service/aws4_request` (§1 Scope) as text and bytes, built once a day.
    private func cachedScope(dateStamp: String) -> String {
        if let scopeCache, scopeCache.dateStamp == dateStamp { return scopeCache.scope }
        let scope = dateStamp + "/" + region + "/" + service + "/aws4_request"
        scopeCache = (dateStamp, scope)
        var bytes = scopeBytes  // the same buffer, written through a local and put back (it may move)
        bytes.removeAll()
        bytes.append(utf8: scope)
        scopeBytes = bytes
        return scope
    }

    /// Appends `yyyymmdd/region/service/aws4_request` (§1 Scope).
    func appendScope(dateStamp: String, to output: inout some ByteSink) {
        if scopeCache?.dateStamp != dateStamp { _ = cachedScope(dateStamp: dateStamp) }
        output.append(bytes: UnsafeBufferPointer(start: scopeBytes.base, count: scopeBytes.count))
    }

    /// `yyyymmdd/region/service/aws4_request` as a `String`.
    func scope(dateStamp: String) -> String {
        cachedScope(dateStamp: dateStamp)
    }

    /// Builds `algorithm \n x-amz-date \n scope \n rest…` (§1, §5.1, §5.2 share this shape).
    func stringToSign(algorithm: String, date: AmzDate, lines: [String]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        appendStringToSignPrefix(algorithm: algorithm, date: date, to: &output)
        for line in lines {
            output.append(0x0A)
            output.append(contentsOf: line.utf8)
        }
        return output
    }

    /// Appends `algorithm \n x-amz-date \n scope` (no trailing newline).
    func appendStringToSignPrefix(algorithm: String, date: AmzDate, to output: inout some ByteSink) {
        output.append(utf8: algorithm)
        output.append(0x0A)
        output.append(utf8: date.string)
        output.append(0x0A)
        appendScope(dateStamp: date.dateStamp, to: &output)
    }

    /// Hex(SHA256(bytes)) appended to `output`.
    func appendSHA256Hex(of bytes: some Collection<UInt8>, to output: inout some ByteSink) throws(SigV4Error) {
        var digest: Digest32 = (0, 0, 0, 0)
        try sha256(bytes, into: &digest)
        withUnsafeBytes(of: &digest) { ByteTables.appendLowerHex($0, to: &output) }
    }

    /// Hex(HMAC(kSigning, stringToSign)) (§1 Signature).
    func signature(of stringToSign: [UInt8], dateStamp: String) throws(SigV4Error) -> String {
        var mac: Digest32 = (0, 0, 0, 0)
        try stringToSign.withRawBytes { (raw) throws(SigV4Error) in
            try authenticate(raw, dateStamp: dateStamp, into: &mac)
        }
        return withUnsafeBytes(of: &mac) { ByteTables.lowerHexString($0) }
    }
}
