/// The proxy's hot path: sign and encode the upstream request head in one go (SIGV4-S3-RULES §8 steps 5–6).
extension Signer {
    /// Signs like `sign(_:payload:date:)` with `.s3Policy` and appends the whole upstream request head to `output`:
    /// "METHOD target HTTP/1.1\r\n", every sent header as "Name: value\r\n" (the request's headers that are kept, in
    /// order, with their original spelling; then X-Amz-Date, X-Amz-Content-SHA256, X-Amz-Security-Token when
    /// credentials carry one, Authorization), then "\r\n".
    ///
    /// These are exactly the bytes of `sign(...)`'s `SignedRequest` encoded as an HTTP/1.1 head, built without the
    /// `SignedRequest` or its strings: §8 step 6, send exactly the path, query and headers that were signed.
    /// On error `output` is left as it was.
    public func signHead(_ request: SignableRequest, payload: PayloadHash, date: AmzDate, into output: inout [UInt8])
        throws(SigV4Error)
    {
        let payloadValue = payload.value
        let token = credentials.sessionToken?.exposedValue
        try withScratch { (scratch) throws(SigV4Error) in
            let layout = try sign(
                request, payloadValue: payloadValue, token: token, date: date, selection: .s3Policy,
                addsContentSHA256Header: true, signsSessionToken: true, scratch: &scratch)
            // Assembled in the scratch writer (cheap appends), then one copy into `output`.
            scratch.head.append(utf8: request.method)
            scratch.head.append(0x20)
            scratch.head.append(utf8: request.path)  // §2.3: the wire path is the canonical URI
            if !layout.query.isEmpty {
                scratch.head.append(UInt8(ascii: "?"))
                scratch.head.append(bytes: scratch.canonicalRequest[layout.query])  // §3 step 7: sent as signed
            }
            scratch.head.append(literal: " HTTP/1.1\r\n")
            for index in scratch.kept {
                let header = request.headers[index]
                Self.appendField(header.name, header.value, to: &scratch.head)
            }
            Self.appendField("X-Amz-Date", date.string, to: &scratch.head)
            // §5: header == last canonical line
            Self.appendField("X-Amz-Content-SHA256", payloadValue, to: &scratch.head)
            if let token { Self.appendField("X-Amz-Security-Token", token, to: &scratch.head) }
            scratch.head.append(literal: "Authorization: ")
            scratch.head.append(bytes: scratch.authorization.bytes)
            scratch.head.append(literal: "\r\n\r\n")
            output.append(contentsOf: scratch.head.bytes)
        }
    }

    /// `name: value\r\n`.
    @inline(__always)
    private static func appendField(_ name: String, _ value: String, to output: inout ByteWriter) {
        output.append(utf8: name)
        output.append(literal: ": ")
        output.append(utf8: value)
        output.append(literal: "\r\n")
    }
}
