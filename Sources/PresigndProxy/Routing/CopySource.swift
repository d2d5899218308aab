import PresigndConfig
import PresigndPolicy
import PresigndSigV4

/// Checks and rewrites an `x-amz-copy-source` header (`[/]bucket/key[?versionId=…]`, URL-encoded).
///
/// Without this check a client could copy any object the upstream credentials can read into a
/// bucket it may write: the source must be a bucket presignd serves (named by its mount, as the
/// client sees it, or by its upstream name) on the same upstream, and the key must pass that
/// bucket's read policy. The header is re-encoded with the upstream bucket name.
enum CopySource {
    static func rewrite(
        _ value: String, settings: ProxySettings, upstreamIndex: Int, principal: Principal, operation: S3Operation
    ) -> Result<String, ProxyError> {
        let denied = { (message: String, rule: String) in
            ProxyError.policyDenied(PolicyDenial(.copySource, rule: rule, message), operation: operation.rawValue)
        }
        var text = Substring(value)
        var version: Substring = ""
        if let question = text.firstIndex(of: "?") {
            version = text[question...]
            text = text[..<question]
        }
        if text.hasPrefix("/") { text = text.dropFirst() }
        let decoded: [UInt8]
        do {
            decoded = try URIEncoding.decodePath(text.utf8, plusIsSpace: false)
        } catch {
            return .failure(.badRequest("invalid percent-encoding in x-amz-copy-source"))
        }
        let slash = UInt8(ascii: "/")
        guard let split = decoded.firstIndex(of: slash), split > 0 else {
            return .failure(.badRequest("x-amz-copy-source must name a bucket and a key"))
        }
        let bucket = Array(decoded[..<split])
        let key = Array(decoded[(split + 1)...])
        let routes = settings.router.routes
        let match =
            routes.first { $0.mount.count > 1 && Array($0.mount.dropFirst()) == bucket }
            ?? routes.first { Array($0.name.utf8) == bucket }
        guard let route = match, route.upstreamIndex == upstreamIndex else {
            return .failure(
                denied("the copy source bucket is not served by presignd on this upstream", "copy source: bucket"))
        }
        do throws(PolicyDenial) {
            try RequestHardening.checkPath(key)
        } catch {
            return .failure(.policyDenied(error, operation: operation.rawValue))
        }
        do throws(PolicyDenial) {
            try RequestRewriter.checkPrincipal(principal, route: route)
            try PolicyEngine.checkCopySource(key: key, isVersioned: !version.isEmpty, sourcePolicy: route.policy)
        } catch {
            return .failure(denied(error.message, "copy source: \(error.rule) of bucket '\(route.name)'"))
        }
        var versionPart = ""
        if !version.isEmpty {
            // Only `versionId` is meaningful here; anything else is refused rather than passed on.
            guard version.hasPrefix("?versionId="), !version.dropFirst(11).contains("&") else {
                return .failure(.badRequest("x-amz-copy-source accepts only a versionId parameter"))
            }
            versionPart = String(version)
        }
        return .success(
            "/" + URIEncoding.encode(route.name.utf8, keepingSlash: false) + "/"
                + URIEncoding.encode(key, keepingSlash: true) + versionPart)
    }
}
