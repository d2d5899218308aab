/// The SigV4 signer for one set of credentials, one region and one service (S3/R2 rules).
///
/// Not `Sendable`: make one per worker thread. It owns reusable OpenSSL contexts and caches the signing
/// key `kSigning` per scope date (§6: it depends only on secret, date, region and service), keeping the
/// current and the previous day so requests straddling UTC midnight do not thrash it.
public final class Signer {
    public let credentials: Credentials
    public let region: String
    public let service: String
    /// When false every signature derives the key again (benchmarks, tests).
    public var cachesSigningKey: Bool = true

    let derivationMAC: HMACSHA256
    let signingMAC: HMACSHA256
    let hasher: SHA256
    private var keyCache: [(dateStamp: String, key: [UInt8])] = []
    /// The date stamp whose key `signingMAC` currently holds.
    private var keyedDateStamp: String?
    /// The last scope string built, per date stamp (one a day; saves four concatenations a request).
    private var scopeCache: (dateStamp: String, scope: String)?

    /// - Throws: `SigV4Error.crypto` when OpenSSL cannot provide HMAC or SHA-256.
    public init(credentials: Credentials, region: String, service: String = "s3") throws(SigV4Error) {
        self.credentials = credentials
        self.region = region
        self.service = service
        self.derivationMAC = try HMACSHA256()
        self.signingMAC = try HMACSHA256()
        self.hasher = try SHA256()
    }

    /// kSigning for a `yyyymmdd` date stamp (§1 key derivation), from the cache when allowed.
    func signingKey(dateStamp: String) throws(SigV4Error) -> [UInt8] {
        if cachesSigningKey, let cached = keyCache.first(where: { $0.dateStamp == dateStamp }) {
            return cached.key
        }
        let secret = Array(("AWS4" + credentials.secretAccessKey.exposedValue).utf8)
        let kDate = try derivationMAC.mac(key: secret, message: dateStamp)
        let kRegion = try derivationMAC.mac(key: kDate, message: region)
        let kService = try derivationMAC.mac(key: kRegion, message: service)
        let kSigning = try derivationMAC.mac(key: kService, message: "aws4_request")
        if cachesSigningKey {
            // Keep today and yesterday only (§6: drop the key after UTC midnight).
            if keyCache.count >= 2 { keyCache.removeFirst() }
            keyCache.append((dateStamp, kSigning))
        }
        return kSigning
    }

    /// Appends `yyyymmdd/region/service/aws4_request` (§1 Scope).
    func appendScope(dateStamp: String, to output: inout [UInt8]) {
        output.append(contentsOf: dateStamp.utf8)
        output.append(UInt8(ascii: "/"))
        output.append(contentsOf: region.utf8)
        output.append(UInt8(ascii: "/"))
        output.append(contentsOf: service.utf8)
        output.append(contentsOf: "/aws4_request".utf8)
    }

    /// `yyyymmdd/region/service/aws4_request` as a `String`.
    func scope(dateStamp: String) -> String {
        if let scopeCache, scopeCache.dateStamp == dateStamp { return scopeCache.scope }
        let scope = dateStamp + "/" + region + "/" + service + "/aws4_request"
        scopeCache = (dateStamp, scope)
        return scope
    }

    /// Builds `algorithm \n x-amz-date \n scope \n rest…` (§1, §5.1, §5.2 share this shape).
    func stringToSign(algorithm: String, date: AmzDate, lines: [String]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        output.append(contentsOf: algorithm.utf8)
        output.append(0x0A)
        output.append(contentsOf: date.string.utf8)
        output.append(0x0A)
        appendScope(dateStamp: date.dateStamp, to: &output)
        for line in lines {
            output.append(0x0A)
            output.append(contentsOf: line.utf8)
        }
        return output
    }

    /// Hex(SHA256(bytes)) appended to `output`.
    func appendSHA256Hex(of bytes: [UInt8], to output: inout [UInt8]) throws(SigV4Error) {
        try hasher.update(bytes)
        var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &raw) { (digest) throws(SigV4Error) in
            try hasher.finalize(into: digest)
            ByteTables.appendLowerHex(UnsafeRawBufferPointer(digest), to: &output)
        }
    }

    /// Hex(HMAC(kSigning, stringToSign)) (§1 Signature), reusing the keyed context when the day matches.
    func signature(of stringToSign: [UInt8], dateStamp: String) throws(SigV4Error) -> String {
        if cachesSigningKey, keyedDateStamp == dateStamp {
            try signingMAC.restart()
        } else {
            let key = try signingKey(dateStamp: dateStamp)
            try key.withRawBytes { (raw) throws(SigV4Error) in try signingMAC.rekey(raw) }
            keyedDateStamp = cachesSigningKey ? dateStamp : nil
        }
        try stringToSign.withRawBytes { (raw) throws(SigV4Error) in try signingMAC.update(raw) }
        var raw = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        return try withUnsafeMutableBytes(of: &raw) { (mac) throws(SigV4Error) -> String in
            try signingMAC.finish(into: mac)
            return ByteTables.lowerHexString(UnsafeRawBufferPointer(mac))
        }
    }
}
