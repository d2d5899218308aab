import PresigndIO
import PresigndSigV4

/// A GET or HEAD of an object in a `redirect = true` bucket, already past the access policy.
struct RedirectPlan {
    var upstreamIndex: Int
    var bucket: String
    var method: String
    /// The upstream path, encoded (`/bucket/key`): also the access log's path.
    var path: String
    /// The client's own query parameters (`response-content-type`, `versionId`, …), presign parameters removed.
    var query: [QueryParameter]
    /// `redirect_expires`, seconds.
    var expires: Int

    init(route: BucketRoute, method: String, path: String, query: [QueryParameter]) {
        self.upstreamIndex = route.upstreamIndex
        self.bucket = route.name
        self.method = method
        self.path = path
        self.query = query
        self.expires = route.redirectExpires
    }
}

/// Redirect mode (issue 7): `307 Temporary Redirect` to a fresh presigned upstream URL, so the bytes flow
/// between the client and the upstream directly. 307 keeps the method (RFC 9110 §15.4.8), and a `Range`
/// header is not signed, so `curl -L -r 100-199` gets exactly those bytes.
extension ClientConnection {
    /// A `307` to a fresh presigned URL for the plan, or the error when it cannot be presigned.
    func redirect(_ plan: RedirectPlan) -> LocalAnswer {
        let target = settings.upstreams[plan.upstreamIndex]
        let presigned: PresignedURL
        guard worker.signer(for: plan.upstreamIndex) != nil else {
            return .error(worker.signingUnavailable(plan.upstreamIndex))
        }
        do {
            guard let signer = worker.signer(for: plan.upstreamIndex) else { throw SigV4Error.crypto("no signer") }
            presigned = try signer.presign(
                method: plan.method, host: target.hostHeader, path: plan.path, query: plan.query,
                expires: plan.expires,
                date: worker.signingDate(upstream: plan.upstreamIndex, settings: settings),
                scheme: target.usesTLS ? "https" : "http")
        } catch {
            worker.metrics.signingFailed()
            return .error(.internalError("cannot presign the redirect"))
        }
        // The URL is a bearer credential until it expires: never cached by intermediaries.
        return .prepared(
            PreparedResponse(
                status: 307, contentType: "text/plain", body: [],
                extraHeaders: [("Location", presigned.url), ("Cache-Control", "no-store")], method: plan.method,
                logPath: plan.path, redirectBucket: plan.bucket))
    }
}
