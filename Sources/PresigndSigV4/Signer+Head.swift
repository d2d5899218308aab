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
            output.reserveCapacity(
                output.count + scratch.canonicalRequest.count + scratch.authorization.count + 64 * request.headers.count
                    + 128)
            Self.append(request.method, to: &output)
            output.append(0x20)
            Self.append(request.path, to: &output)  // §2.3: the wire path is the canonical URI
            if !layout.query.isEmpty {
                output.append(UInt8(ascii: "?"))
                output.append(contentsOf: scratch.canonicalRequest[layout.query])  // §3 step 7: sent as signed
            }
            output.append(literal: " HTTP/1.1\r\n")
            for index in scratch.kept {
                let header = request.headers[index]
                Self.appendField(header.name, header.value, to: &output)
            }
            Self.appendField("X-Amz-Date", date.string, to: &output)
            Self.appendField("X-Amz-Content-SHA256", payloadValue, to: &output)  // §5: header == last canonical line
            if let token { Self.appendField("X-Amz-Security-Token", token, to: &output) }
            output.append(literal: "Authorization: ")
            output.append(contentsOf: scratch.authorization.bytes)
            output.append(literal: "\r\n\r\n")
        }
    }

    @inline(__always)
    private static func append(_ text: String, to output: inout [UInt8]) {
        ASCIIBytes.withBytes(text) { output.append(contentsOf: $0) }
    }

    /// `name: value\r\n`.
    @inline(__always)
    private static func appendField(_ name: String, _ value: String, to output: inout [UInt8]) {
        append(name, to: &output)
        output.append(literal: ": ")
        append(value, to: &output)
        output.append(literal: "\r\n")
    }
}
