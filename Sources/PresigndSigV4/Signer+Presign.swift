/// Query-string signing: presigned URLs (SIGV4-S3-RULES §7).
extension Signer {
    /// The longest `X-Amz-Expires` S3 and R2 accept: 7 days (§7).
    public static let maximumExpiry = 604_800

    /// Mints a presigned URL.
    ///
    /// - Parameters:
    ///   - host: the `Host` value, lower case, `:port` only when not the default (§4.2).
    ///   - path: the canonical (already encoded) path, exactly what goes on the wire (§2.3).
    ///   - query: the operation's own decoded parameters (`response-content-disposition`, `versionId`, …);
    ///     any client `X-Amz-*` presign parameters are dropped.
    ///   - headers: extra headers to sign besides `host` (e.g. `Content-Type` for a PUT); the user of the URL
    ///     must send them with exactly these values.
    ///   - expires: seconds, 1...604800 (§7).
    ///   - payload: `.unsigned` for S3 (§7); the generic vectors use `.emptyBody`.
    ///   - signsSessionToken: `false` appends the token after signing (`post-sts-header-after` only).
    /// - Throws: `.invalidExpiry` outside 1...604800.
    public func presign(
        method: String, host: String, path: String, query: [QueryParameter] = [],
        headers: [(name: String, value: String)] = [], expires: Int, date: AmzDate, scheme: String = "https",
        payload: PayloadHash = .unsigned, signsSessionToken: Bool = true
    ) throws(SigV4Error) -> PresignedURL {
        guard (1...Self.maximumExpiry).contains(expires) else { throw .invalidExpiry(seconds: expires) }
        let dateStamp = date.dateStamp
        var canonical = CanonicalHeaders()
        defer { canonical.deallocate() }
        canonical.add(lowercasedName: "host", value: .own(0))
        var mustSend: [(name: String, value: String)] = []
        for (index, header) in headers.enumerated() {
            let name = canonical.appendName(header.name)
            guard !ASCIIBytes.equals(canonical.name(name), "host") else { continue }
            canonical.add(name: name, value: .header(index))
            mustSend.append(header)
        }
        canonical.sort()
        var headerBlock: [UInt8] = []
        var signedHeaders: [UInt8] = []
        canonical.appendBlock(to: &headerBlock, headers: headers, own: (host, "", ""))
        canonical.appendSignedHeaders(to: &signedHeaders)

        // §7 query parameters, sorted together with the operation's own (§3).
        var credential: [UInt8] = Array(credentials.accessKeyID.utf8)
        credential.append(UInt8(ascii: "/"))
        appendScope(dateStamp: dateStamp, to: &credential)
        var parameters = query.filter { !PresignParameters.isPresignParameter(name: $0.name) }
        parameters.append(QueryParameter(name: "X-Amz-Algorithm", value: "AWS4-HMAC-SHA256"))
        parameters.append(QueryParameter(name: "X-Amz-Credential", value: String(decoding: credential, as: UTF8.self)))
        parameters.append(QueryParameter(name: "X-Amz-Date", value: date.string))
        parameters.append(QueryParameter(name: "X-Amz-Expires", value: String(expires)))
        parameters.append(
            QueryParameter(name: "X-Amz-SignedHeaders", value: String(decoding: signedHeaders, as: UTF8.self)))
        let token = credentials.sessionToken?.exposedValue
        if let token, signsSessionToken {
            // §7: inside the canonical query
            parameters.append(QueryParameter(name: "X-Amz-Security-Token", value: token))
        }
        let canonicalQuery = URIEncoding.canonicalQuery(parameters)

        var bytes: [UInt8] = []
        bytes.reserveCapacity(512 + canonicalQuery.utf8.count)
        for part in [method, path, canonicalQuery] {
            bytes.append(contentsOf: part.utf8)
            bytes.append(0x0A)
        }
        bytes.append(contentsOf: headerBlock)
        bytes.append(0x0A)
        bytes.append(contentsOf: signedHeaders)
        bytes.append(0x0A)
        bytes.append(contentsOf: payload.value.utf8)

        var stringToSign = stringToSign(algorithm: "AWS4-HMAC-SHA256", date: date, lines: [])
        stringToSign.append(0x0A)
        try appendSHA256Hex(of: bytes, to: &stringToSign)
        let signature = try signature(of: stringToSign, dateStamp: dateStamp)

        var url = scheme + "://" + host + path + "?" + canonicalQuery
        if let token, !signsSessionToken {
            url += "&X-Amz-Security-Token=" + URIEncoding.encode(token.utf8, keepingSlash: false)
        }
        url += "&X-Amz-Signature=" + signature  // §7: appended last, never signed
        return PresignedURL(
            url: url, method: method, canonicalRequest: String(decoding: bytes, as: UTF8.self),
            stringToSign: String(decoding: stringToSign, as: UTF8.self), signature: signature,
            signedHeaders: mustSend, expiresAt: date.epochSeconds + expires)
    }
}
