/// A bucket as the proxy serves it: where it is mounted locally and what it allows.
struct BucketRoute: Sendable {
    /// The bucket's name upstream.
    var name: String
    /// Index into `ProxySettings.upstreams`.
    var upstreamIndex: Int
    /// Decoded mount path bytes: `/` (fixed bucket) or `/name` (path-style, the default).
    var mount: [UInt8]
    var isReadOnly: Bool
    /// Upper-case methods allowed; empty means every method `isReadOnly` permits.
    var allowedMethods: Set<String> = []
    /// Key prefixes allowed; empty means all keys.
    var allowedPrefixes: [String] = []
    var maxUploadSize: Int? = nil
    var plusInPathIsSpace: Bool = false
    /// `redirect`: GET/HEAD of objects answered with a 307 to a presigned upstream URL (issue 7).
    var redirect: Bool = false
    /// `redirect_expires`, seconds (1...604800).
    var redirectExpires: Int = 300
    /// `max_presign_expiry`, seconds: the longest link the presign API and the CLI grant.
    var maxPresignExpiry: Int = 604_800
}

/// Where a request goes, decided from its decoded path alone.
enum RouteDecision: Equatable {
    /// `GET /` with no bucket mounted at `/`: answered locally with the configured buckets.
    case serviceRoot
    /// A configured bucket: `upstreamPath` is the decoded path to send (`/bucket/key…`),
    /// `key` the decoded object key ("" for bucket-level requests), a slice of the decoded path.
    case bucket(routeIndex: Int, upstreamPath: [UInt8], key: ArraySlice<UInt8>)
    case noSuchBucket(String)
}

/// Routes decoded request paths to buckets by longest mount prefix (DESIGN §2).
struct Router: Sendable {
    let routes: [BucketRoute]
    /// Route indices, longest mount first, so `/photos` wins over a `/` catch-all.
    private let order: [Int]

    /// Per route: its mount is `/` + its upstream name (path-style under the bucket's own name, the default),
    /// so the decoded path is already the upstream path and is passed on as it is, not copied.
    private let mountIsUpstreamPrefix: [Bool]

    init(routes: [BucketRoute]) {
        self.routes = routes
        self.order = routes.indices.sorted { routes[$0].mount.count > routes[$1].mount.count }
        self.mountIsUpstreamPrefix = routes.map { $0.mount == [UInt8(ascii: "/")] + Array($0.name.utf8) }
    }

    func route(decodedPath path: [UInt8]) -> RouteDecision {
        let slash = UInt8(ascii: "/")
        for index in order {
            let mount = routes[index].mount
            let remainder: ArraySlice<UInt8>
            if mount.count == 1 && mount[0] == slash {
                remainder = path[...]
            } else if path.count >= mount.count && path.starts(with: mount)
                && (path.count == mount.count || path[mount.count] == slash)
            {
                remainder = path[mount.count...]
            } else {
                continue
            }
            // Path-style upstream: `/bucket` + the remainder as sent (`""`, `/`, or `/key`).
            var upstreamPath: [UInt8]
            if mountIsUpstreamPrefix[index] {
                upstreamPath = path
            } else {
                upstreamPath = []
                upstreamPath.reserveCapacity(1 + routes[index].name.utf8.count + remainder.count)
                upstreamPath.append(slash)
                upstreamPath.append(contentsOf: routes[index].name.utf8)
                upstreamPath.append(contentsOf: remainder)
            }
            let key = remainder.first == slash ? remainder.dropFirst() : remainder
            return .bucket(routeIndex: index, upstreamPath: upstreamPath, key: key)
        }
        if path.isEmpty || path == [slash] { return .serviceRoot }
        let name = path.dropFirst().split(separator: slash, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        return .noSuchBucket(String(decoding: name, as: UTF8.self))
    }
}

/// Per-bucket access policy (DESIGN §6): methods, read-only, key prefixes, list prefixes.
enum AccessPolicy {
    /// `GET` or `HEAD`: what a read-only bucket allows and redirect mode serves.
    static func isReadMethod(_ method: String) -> Bool { method == "GET" || method == "HEAD" }

    /// nil when allowed, else the reason for `403 AccessDenied`.
    static func denial(
        route: BucketRoute, method: String, key: some Collection<UInt8>, listPrefix: String?
    ) -> String? {
        if route.isReadOnly && !isReadMethod(method) {
            return "bucket '\(route.name)' is read-only"
        }
        if !route.allowedMethods.isEmpty && !route.allowedMethods.contains(method) {
            return "method \(method) is not allowed on bucket '\(route.name)'"
        }
        guard !route.allowedPrefixes.isEmpty else { return nil }
        if key.isEmpty {
            // Bucket-level: a listing must stay inside the allowed prefixes.
            guard method == "GET" || method == "HEAD" else {
                return "bucket-level \(method) is not allowed when allowed_prefixes is set"
            }
            let prefix = listPrefix ?? ""
            let inside = route.allowedPrefixes.contains { prefix.utf8.starts(with: $0.utf8) }
            return inside ? nil : "listing outside the allowed prefixes"
        }
        let inside = route.allowedPrefixes.contains { key.starts(with: $0.utf8) }
        return inside ? nil : "key outside the allowed prefixes"
    }
}
