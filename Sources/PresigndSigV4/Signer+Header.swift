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
        return try withScratch { (scratch) throws(SigV4Error) -> SignedRequest in
            let layout = try sign(
                request, payloadValue: payloadValue, token: token, date: date, selection: selection,
                addsContentSHA256Header: addsContentSHA256Header, signsSessionToken: signsSessionToken,
                scratch: &scratch)
            var sent: [(name: String, value: String)] = []
            sent.reserveCapacity(scratch.kept.count + 4)
            for index in scratch.kept { sent.append(request.headers[index]) }
            sent.append(("X-Amz-Date", date.string))
            // §5: header == last canonical line
            if addsContentSHA256Header { sent.append(("X-Amz-Content-SHA256", payloadValue)) }
            if let token { sent.append(("X-Amz-Security-Token", token)) }
            let authorization = String(decoding: scratch.authorization.bytes, as: UTF8.self)
            sent.append(("Authorization", authorization))

            let canonicalQuery = String(decoding: scratch.canonicalRequest[layout.query], as: UTF8.self)
            var target = request.path
            if !layout.query.isEmpty {
                target.reserveCapacity(target.utf8.count + 1 + layout.query.count)
                target += "?"
                target += canonicalQuery
            }
            return SignedRequest(
                method: request.method, target: target, headers: sent, canonicalQuery: canonicalQuery,
                signedHeaders: String(decoding: scratch.canonicalRequest[layout.signedHeaders], as: UTF8.self),
                signature: String(decoding: scratch.authorization.bytes.suffix(64), as: UTF8.self),
                authorization: authorization, canonicalRequestBytes: Array(scratch.canonicalRequest.bytes),
                stringToSignBytes: Array(scratch.stringToSign.bytes))
        }
    }

    /// Where the variable parts of a signature sit in `SigningScratch.canonicalRequest`.
    struct SignatureLayout {
        /// The canonical query (§3), which is also the wire query.
        var query: Range<Int>
        /// SignedHeaders (§4.1).
        var signedHeaders: Range<Int>
    }

    /// The one header signer behind `sign` and `signHead`: decides what is sent and signed, and leaves the kept
    /// header indices, the canonical request, the string to sign and the `Authorization` value in `scratch`.
    func sign(
        _ request: SignableRequest, payloadValue: String, token: String?, date: AmzDate,
        selection: SignedHeaderSelection, addsContentSHA256Header: Bool, signsSessionToken: Bool,
        scratch: inout SigningScratch
    ) throws(SigV4Error) -> SignatureLayout {
        scratch.removeAll()
        let isS3Policy = if case .s3Policy = selection { true } else { false }

        // Lower-case every name once; collect the names `Connection` lists (§4.4, RFC 9110 §7.6.1).
        for header in request.headers {
            let name = scratch.canonical.appendName(header.name)
            scratch.nameRanges.append(name)
            if isS3Policy, name.count == 10 {
                if ASCIIBytes.equals(scratch.canonical.name(name), "connection") {
                    ASCIIBytes.withBytes(header.value) {
                        HeaderPolicy.appendConnectionTokens(
                            $0, to: &scratch.connectionTokens, spans: &scratch.connectionRanges)
                    }
                }
            }
        }

        // §8 step 3–4: decide what is sent and what is signed, then add the signer's own headers.
        for index in request.headers.indices {
            let name = scratch.nameRanges[index]
            let bytes = scratch.canonical.name(name)
            let rule: HeaderRule
            if isS3Policy {
                rule = scratch.isConnectionListed(bytes) ? .strip : HeaderPolicy.rule(forLowercasedName: bytes)
            } else {
                rule = Self.isSetBySigner(bytes, addsContentSHA256Header, token != nil) ? .strip : .sign
            }
            switch rule {
            case .strip: continue
            case .forwardUnsigned: scratch.kept.append(index)
            case .sign:
                scratch.kept.append(index)
                scratch.canonical.add(name: name, value: .header(index))
            }
        }
        scratch.canonical.add(lowercasedName: "x-amz-date", value: .own(0))
        if addsContentSHA256Header {
            scratch.canonical.add(lowercasedName: "x-amz-content-sha256", value: .own(1))  // §5: header == last line
        }
        if token != nil, signsSessionToken {
            scratch.canonical.add(lowercasedName: "x-amz-security-token", value: .own(2))
        }
        scratch.canonical.sort()

        // §1 CanonicalRequest, built in one byte buffer.
        scratch.canonicalRequest.append(utf8: request.method)
        scratch.canonicalRequest.append(0x0A)
        scratch.canonicalRequest.append(utf8: request.path)
        scratch.canonicalRequest.append(0x0A)
        let queryStart = scratch.canonicalRequest.count
        // §4.4: with the S3 policy the client's presign parameters are replaced, never forwarded.
        URIEncoding.appendCanonicalQuery(
            request.query, skippingPresignParameters: isS3Policy, scratch: &scratch.query,
            to: &scratch.canonicalRequest)
        let query = queryStart..<scratch.canonicalRequest.count
        scratch.canonicalRequest.append(0x0A)
        scratch.canonical.appendBlock(
            to: &scratch.canonicalRequest, headers: request.headers, own: (date.string, payloadValue, token ?? ""))
        scratch.canonicalRequest.append(0x0A)
        let signedHeadersStart = scratch.canonicalRequest.count
        scratch.canonical.appendSignedHeaders(to: &scratch.canonicalRequest)
        let signedHeaders = signedHeadersStart..<scratch.canonicalRequest.count
        scratch.canonicalRequest.append(0x0A)
        scratch.canonicalRequest.append(utf8: payloadValue)

        // §1 StringToSign and Signature.
        appendStringToSignPrefix(algorithm: "AWS4-HMAC-SHA256", date: date, to: &scratch.stringToSign)
        scratch.stringToSign.append(0x0A)
        try appendSHA256Hex(of: scratch.canonicalRequest.bytes, to: &scratch.stringToSign)
        var mac: Digest32 = (0, 0, 0, 0)
        try authenticate(UnsafeRawBufferPointer(scratch.stringToSign.bytes), dateStamp: date.dateStamp, into: &mac)

        // §1 Authorization: one line, `, ` between the parts.
        scratch.authorization.append(literal: "AWS4-HMAC-SHA256 Credential=")
        scratch.authorization.append(utf8: credentials.accessKeyID)
        scratch.authorization.append(UInt8(ascii: "/"))
        appendScope(dateStamp: date.dateStamp, to: &scratch.authorization)
        scratch.authorization.append(literal: ", SignedHeaders=")
        scratch.authorization.append(bytes: scratch.canonicalRequest[signedHeaders])
        scratch.authorization.append(literal: ", Signature=")
        withUnsafeBytes(of: &mac) { ByteTables.appendLowerHex($0, to: &scratch.authorization) }
        return SignatureLayout(query: query, signedHeaders: signedHeaders)
    }

    /// Runs `body` on the signer's scratch buffers (see `SigningScratch`).
    func withScratch<Result>(_ body: (inout SigningScratch) throws(SigV4Error) -> Result) throws(SigV4Error)
        -> Result
    {
        // The Signer is confined to one thread and `body` never signs again: one user at a time.
        try body(&scratchStorage.pointee)
    }

    /// Headers the signer sets itself and therefore replaces in `.all` mode (§4.4 "Replace").
    private static func isSetBySigner(_ name: UnsafeBufferPointer<UInt8>, _ addsContentSHA256: Bool, _ hasToken: Bool)
        -> Bool
    {
        if ASCIIBytes.equals(name, "authorization") || ASCIIBytes.equals(name, "x-amz-date") { return true }
        if ASCIIBytes.equals(name, "x-amz-content-sha256") { return addsContentSHA256 }
        if ASCIIBytes.equals(name, "x-amz-security-token") { return hasToken }
        return false
    }
}
