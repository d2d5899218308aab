/// Authorization-header signing (SIGV4-S3-RULES §1, §4, §8 steps 3–5).
extension Signer {
    /// Signs a request head and returns everything to send.
    ///
    /// - Parameters:
    ///   - payload: the HashedPayload (§5); also the `X-Amz-Content-SHA256` value.
    ///   - date: the signing time; the scope date comes from the same string (§6).
    ///   - selection: `.s3Policy` for the proxy, `.all` for the generic vectors.
    ///   - addsContentSHA256Header: S3 requires it (§4.2); the generic vectors do not send it.
    ///   - signsSessionToken: S3 expects the token signed; `false` only reproduces `post-sts-header-after`.
    public func sign(
        _ request: SignableRequest, payload: PayloadHash, date: AmzDate, selection: SignedHeaderSelection = .s3Policy,
        addsContentSHA256Header: Bool = true, signsSessionToken: Bool = true
    ) throws(SigV4Error) -> SignedRequest {
        let payloadValue = payload.value
        let token = credentials.sessionToken?.exposedValue
        var connectionNames: [String] = []
        if case .s3Policy = selection {
            for header in request.headers where header.name.utf8.count == 10 {
                if ByteTables.asciiLowercased(header.name) == "connection" {
                    connectionNames += HeaderPolicy.connectionListedNames(header.value)
                }
            }
        }

        // §8 step 3–4: decide what is sent and what is signed, then add the signer's own headers.
        var sent: [(name: String, value: String)] = []
        sent.reserveCapacity(request.headers.count + 4)
        var canonical = CanonicalHeaders(capacity: request.headers.count + 3)
        for header in request.headers {
            let name = ByteTables.asciiLowercased(header.name)
            let rule: HeaderRule
            switch selection {
            case .s3Policy:
                rule = connectionNames.contains(name) ? .strip : HeaderPolicy.rule(forLowercasedName: name)
            case .all:
                rule = Self.isSetBySigner(name, addsContentSHA256Header, token != nil) ? .strip : .sign
            }
            switch rule {
            case .strip: continue
            case .forwardUnsigned: sent.append(header)
            case .sign:
                sent.append(header)
                canonical.add(lowercasedName: name, value: header.value)
            }
        }
        sent.append(("X-Amz-Date", date.string))
        canonical.add(lowercasedName: "x-amz-date", value: date.string)
        if addsContentSHA256Header {
            sent.append(("X-Amz-Content-SHA256", payloadValue))  // §5: header == last canonical line
            canonical.add(lowercasedName: "x-amz-content-sha256", value: payloadValue)
        }
        if let token {
            sent.append(("X-Amz-Security-Token", token))
            if signsSessionToken { canonical.add(lowercasedName: "x-amz-security-token", value: token) }
        }
        canonical.sort()

        // §1 CanonicalRequest, built in one byte buffer.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        bytes.append(contentsOf: request.method.utf8)
        bytes.append(0x0A)
        bytes.append(contentsOf: request.path.utf8)
        bytes.append(0x0A)
        let queryStart = bytes.count
        if case .s3Policy = selection, request.query.contains(where: { PresignParameters.isPresignParameter(name: $0.name) }) {
            // §4.4: the client's presign parameters are replaced, never forwarded.
            let kept = request.query.filter { !PresignParameters.isPresignParameter(name: $0.name) }
            URIEncoding.appendCanonicalQuery(kept, to: &bytes)
        } else {
            URIEncoding.appendCanonicalQuery(request.query, to: &bytes)
        }
        let canonicalQuery = String(decoding: bytes[queryStart...], as: UTF8.self)
        bytes.append(0x0A)
        var signedHeaders: [UInt8] = []
        signedHeaders.reserveCapacity(128)
        canonical.append(to: &bytes, signedHeaders: &signedHeaders)
        bytes.append(0x0A)
        bytes.append(contentsOf: signedHeaders)
        bytes.append(0x0A)
        bytes.append(contentsOf: payloadValue.utf8)

        // §1 StringToSign and Signature.
        var stringToSign = stringToSign(algorithm: "AWS4-HMAC-SHA256", date: date, lines: [])
        stringToSign.append(0x0A)
        try appendSHA256Hex(of: bytes, to: &stringToSign)
        let dateStamp = date.dateStamp
        let signature = try signature(of: stringToSign, dateStamp: dateStamp)

        // §1 Authorization: one line, `, ` between the parts.
        var authorizationValue = "AWS4-HMAC-SHA256 Credential="
        authorizationValue.reserveCapacity(160 + signedHeaders.count + credentials.accessKeyID.utf8.count)
        authorizationValue += credentials.accessKeyID
        authorizationValue += "/"
        authorizationValue += scope(dateStamp: dateStamp)
        let signedHeadersText = String(decoding: signedHeaders, as: UTF8.self)
        authorizationValue += ", SignedHeaders="
        authorizationValue += signedHeadersText
        authorizationValue += ", Signature="
        authorizationValue += signature
        sent.append(("Authorization", authorizationValue))

        return SignedRequest(
            method: request.method,
            target: canonicalQuery.isEmpty ? request.path : request.path + "?" + canonicalQuery,
            headers: sent, canonicalQuery: canonicalQuery,
            signedHeaders: signedHeadersText, signature: signature,
            authorization: authorizationValue, canonicalRequestBytes: bytes, stringToSignBytes: stringToSign)
    }

    /// Headers the signer sets itself and therefore replaces in `.all` mode (§4.4 "Replace").
    private static func isSetBySigner(_ name: String, _ addsContentSHA256: Bool, _ hasToken: Bool) -> Bool {
        switch name {
        case "authorization", "x-amz-date": true
        case "x-amz-content-sha256": addsContentSHA256
        case "x-amz-security-token": hasToken
        default: false
        }
    }
}
