import PresigndConfig
import PresigndPolicy

/// A bucket as the proxy serves it: where it is mounted locally and what it allows.
///
/// Its fields live in one immutable shared object (`Fields`): every request reads its route, and a copy of a struct
/// of strings, arrays and a policy retains and releases each of them (ten reference-count operations a request);
/// a copy of this one is one. A field is read and set through the route itself (`route.name`, one subscript for
/// all of them); setting one (configuration only) replaces the shared object.
@dynamicMemberLookup
struct BucketRoute: Sendable {
    struct Fields: Sendable {
        /// The bucket's name upstream.
        var name: String
        /// Index into `ProxySettings.upstreams`.
        var upstreamIndex: Int
        /// Decoded mount path bytes: `/` (fixed bucket) or `/name` (path-style, the default).
        var mount: [UInt8]
        /// What the policy engine judges requests by: access, actions, methods, prefixes.
        var policy: BucketPolicy
        /// `allow`: who may use the bucket; empty means whoever can connect.
        var principals: [PrincipalPattern] = []
        var maxUploadSize: Int? = nil
        var plusInPathIsSpace = false
        /// `redirect`: GET/HEAD of objects answered with a 307 to a presigned upstream URL (issue 7).
        var redirect = false
        /// `redirect_expires`, seconds (1...604800).
        var redirectExpires = 300
        /// `max_presign_expiry`, seconds: the longest link the presign API and the CLI grant.
        var maxPresignExpiry = 604_800
        /// `[bucket.cache]` (issue 23): its store is `ProxySettings.caches[cache.directory]`.
        var cache: CacheConfig? = nil
    }

    private final class Storage: Sendable {
        let fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    private var storage: Storage

    init(name: String, upstreamIndex: Int, mount: [UInt8], isReadOnly: Bool) {
        storage = Storage(
            Fields(
                name: name, upstreamIndex: upstreamIndex, mount: mount,
                policy: BucketPolicy(bucket: name, access: isReadOnly ? .readOnly : .readWrite)))
    }

    /// Every field of `Fields`, read in place and set by replacing the shared object.
    subscript<Value>(dynamicMember field: WritableKeyPath<Fields, Value>) -> Value {
        get { storage.fields[keyPath: field] }
        set {
            var fields = storage.fields
            fields[keyPath: field] = newValue
            storage = Storage(fields)
        }
    }

    var isReadOnly: Bool { storage.fields.policy.access == .readOnly }

    /// Upper-case methods allowed (`allowed_methods`); empty means any the actions allow.
    var allowedMethods: Set<String> {
        get { storage.fields.policy.allowedMethods }
        set { self.policy.allowedMethods = newValue }
    }

    /// Key prefixes allowed; empty means all keys.
    var allowedPrefixes: [String] {
        get { storage.fields.policy.allowedPrefixes }
        set { self.policy.allowedPrefixes = newValue }
    }
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
