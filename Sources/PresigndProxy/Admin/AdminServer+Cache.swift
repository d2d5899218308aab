import PresigndHTTP1

/// `POST /v1/cache/purge` (issue 23 §7): drops cached objects while the daemon runs, behind the admin API's token
/// and origin checks (`respondAPI`, `refusal(of:)`):
///
///     {}                                      every object of every cache directory
///     {"bucket": "photos"}                    the bucket's objects (in its directory)
///     {"bucket": "photos", "prefix": "a/"}    those whose key starts with the prefix
///
/// Unknown members are refused (a misspelt `bucket` must not purge everything).
extension AdminServer {
    static let cachePurgePath = "/v1/cache/purge"

    func respondCachePurge(body: [UInt8], headers: [(name: String, value: String)]) -> LocalResponse {
        func refuse(_ failure: PresignFailure) -> LocalResponse {
            LocalResponse(status: failure.status, json: failure.json, headers: headers)
        }
        let object: JSONObject
        switch PresignRequestJSON.object(body, knownFields: ["bucket", "prefix"]) {
        case .failure(let failure): return refuse(failure)
        case .success(let parsed): object = parsed
        }
        var bucket: String? = nil
        switch object["bucket"] {
        case nil, .null?: break
        case .string(let name)? where !name.isEmpty: bucket = name
        default: return refuse(.invalid("bucket", "bucket must be a bucket name (a string)"))
        }
        var prefix = ""
        switch object["prefix"] {
        case nil, .null?: break
        case .string(let value)? where bucket != nil: prefix = value
        default: return refuse(.invalid("prefix", "prefix must be a string, and goes with bucket"))
        }
        let settings = daemon.settings
        var purged = 0
        do {
            if let bucket {
                let routes = settings.router.routes.filter { $0.name == bucket && $0.cache != nil }
                guard !routes.isEmpty else {
                    return refuse(.invalid("bucket", "bucket '\(bucket)' is not served or has no [bucket.cache]"))
                }
                for route in routes {
                    guard let directory = route.cache?.directory, let store = settings.caches[directory] else {
                        continue
                    }
                    purged += try store.invalidate(
                        upstream: settings.upstreams[route.upstreamIndex].objectNamespace, bucket: route.name,
                        keyPrefix: prefix)
                }
            } else {
                for store in settings.caches.stores.values {
                    purged += try store.invalidate(upstream: nil, bucket: nil, keyPrefix: "")
                }
            }
        } catch {
            logger.error("Cache purge failed", metadata: ["error": "\(error)"])
            return refuse(PresignFailure(status: 500, code: "InternalError", field: "", message: "\(error)"))
        }
        logger.info("Cache purged", metadata: ["bucket": bucket ?? "*", "prefix": prefix, "objects": String(purged)])
        return LocalResponse(status: 200, json: JSONWriter.render([("purged", .int(purged))]), headers: headers)
    }
}
