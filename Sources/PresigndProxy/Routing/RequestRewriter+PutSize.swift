import PresigndHTTP1

/// The upstream's largest single PUT (issue 20).
extension RequestRewriter {
    /// Refuses a body whose declared length is over what one PUT (object or part) to the upstream may carry (R2:
    /// 5 GiB − 5 MiB, S3: 5 GiB): the upstream would refuse it after every byte had been sent or spooled. The length
    /// is the decoded one for `aws-chunked` (the chunk signatures do not count), `Content-Length` otherwise.
    static func requireWithinPutSize(head: RequestHead, framing: BodyFraming, limit: Int) throws(ProxyError) {
        if let text = head.headers["x-amz-decoded-content-length"], let decoded = Int(text) {
            if decoded > limit { throw .entityTooLarge }
            return
        }
        if case .contentLength(let length) = framing, length > limit { throw .entityTooLarge }
    }
}
