import PresigndConfig
import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4

/// `POST /v1/credentials` (issue 22 §3): R2 temporary credentials minted locally for an app (a browser, a job, an
/// agent), under the presign API's rules: its token and origin checks (`respondAPI`), the bucket's `allow` list for
/// the principal, and a scope never wider than the bucket's policy nor longer than 7 days (`R2CredentialPolicy`).
extension AdminServer {
    func respondCredentials(body: [UInt8], principal: Principal, headers: [(name: String, value: String)])
        -> LocalResponse
    {
        func refuse(_ failure: PresignFailure) -> LocalResponse {
            LocalResponse(status: failure.status, json: failure.json, headers: headers)
        }
        let request: R2CredentialRequest
        switch R2CredentialRequestJSON.decode(body) {
        case .failure(let failure): return refuse(failure)
        case .success(let decoded): request = decoded
        }
        // The principal may mint for a bucket only if it may use the bucket (its `allow` list), as for links.
        if let route = daemon.settings.router.routes.first(where: { $0.name == request.bucket }) {
            do throws(PolicyDenial) {
                try RequestRewriter.checkPrincipal(principal, route: route)
            } catch {
                return refuse(.denied("principal", error.message + " (rule: \(error.rule))"))
            }
        }
        guard let configuration = daemon.configuration else {
            return refuse(PresignFailure(status: 500, code: "InternalError", field: "", message: "no configuration"))
        }
        let now = AmzDate.now().epochSeconds
        switch R2CredentialPolicy.mint(request, configuration: configuration, now: now) {
        case .failure(let failure):
            return refuse(failure)
        case .success(let minted):
            logger.info(
                "Temporary credentials minted",
                metadata: [
                    "bucket": request.bucket, "r2.permission": request.permission.rawValue,
                    "prefixes": String(request.prefixes.count), "objects": String(request.objects.count),
                    "expires.s": String(request.ttlSeconds), "credentials.key": "…" + minted.accessKeyID.suffix(4),
                ])
            let json = JSONWriter.render(minted.processJSONMembers + [("Endpoint", .string(minted.endpoint))])
            return LocalResponse(status: 200, json: json, headers: headers)
        }
    }
}
