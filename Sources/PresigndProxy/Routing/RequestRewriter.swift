import PresigndCache
import PresigndConfig
import PresigndHTTP1
import PresigndPolicy
import PresigndSigV4

/// A request ready to sign and send upstream.
struct ForwardPlan {
    var upstreamIndex: Int
    var bucket: String
    /// Path without query, decoded then re-encoded, for the access log.
    var logPath: String
    var request: SignableRequest
    var payload: PayloadHash
    var body: BodyPlan
    var maxUploadSize: Int?
    var verdict: PolicyVerdict
    /// DeleteObjects: the body is spooled whole (bounded) and each key checked before anything is sent.
    var deleteKeysPolicy: BucketPolicy? = nil
    /// The cached objects this request makes stale (issue 23 §8), when a cache directory is open.
    var cacheInvalidation: CacheInvalidation? = nil
    /// A GET or HEAD of an object of a bucket whose cache directory is open: where to look it up (issue 23).
    var cacheRead: CacheReadTarget? = nil
}

/// The object a GET or HEAD names, in the store of its bucket's cache directory. A class: a plan is copied a few
/// times per request, and this (with the bucket's whole cache configuration) would make every copy of every plan
/// larger, cache or not; as a reference it is one pointer, nil when no cache is open.
final class CacheReadTarget {
    let directory: String
    let name: ObjectName
    /// `SliceStore.key(name)`, computed once: the store is asked several times per request.
    let key: CacheKey
    let config: CacheConfig

    init(directory: String, name: ObjectName, key: CacheKey, config: CacheConfig) {
        self.directory = directory
        self.name = name
        self.key = key
        self.config = config
    }
}

/// How a request body reaches the upstream.
enum BodyPlan: Equatable {
    /// No body, or a body with a known length streamed as it arrives.
    case stream
    /// Spooled to a temporary file first, then sent with `Content-Length`: length-less
    /// (chunked) uploads, and `aws-chunked` bodies unwrapped for upstreams that refuse them.
    case spool(unwrapsAWSChunked: Bool, decodedLength: Int?)
    /// An `aws-chunked` body whose decoded length is known: decoded as it arrives and streamed (issue 21).
    case decodeAWSChunked(AWSChunkedPlan)
}

/// What to do with a request head.
enum RewriteDecision {
    case serviceRoot
    case forward(ForwardPlan)
    /// `redirect = true` bucket, object GET/HEAD: a 307 to a fresh presigned URL (ClientConnection+Redirect).
    case redirect(RedirectPlan)
}

/// Turns a client's head into the upstream request (DESIGN §2 RequestRewriter): route, policy,
/// target URL, hop-by-hop and client-auth headers stripped. Pure: no I/O, no clock.
enum RequestRewriter {
    /// The decision for `head`, or the error to answer it with. Typed throws rather than a `Result`: on the hot
    /// path a `Result`'s destruction goes through the runtime's generic value witnesses on every request.
    static func rewrite(
        head: RequestHead, framing: BodyFraming, settings: ProxySettings,
        principal: Principal = Principal(peer: .unknown)
    ) throws(ProxyError) -> RewriteDecision {
        if head.method == "CONNECT" { throw .notImplemented("CONNECT is not supported") }
        let rawTarget: Substring
        switch originForm(of: head) {
        case .success(let target): rawTarget = target
        case .failure(let error): throw error
        }
        let (rawPath, rawQuery) = splitTarget(rawTarget)
        let decodedPath: [UInt8]
        do {
            decodedPath = try URIEncoding.decodePath(rawPath.utf8, plusIsSpace: false)
        } catch {
            throw .badRequest("invalid percent-encoding or UTF-8 in the path")
        }
        try harden(decodedPath: decodedPath, queryNames: [])
        var routeDecision = settings.router.route(decodedPath: decodedPath)
        if case .bucket(let index, _, _) = routeDecision, settings.router.routes[index].plusInPathIsSpace {
            // Clients pasting S3-console URLs: `+` in the path means a space (SIGV4-S3-RULES §2.4).
            guard let spaced = try? URIEncoding.decodePath(rawPath.utf8, plusIsSpace: true) else {
                throw .badRequest("invalid percent-encoding in the path")
            }
            routeDecision = settings.router.route(decodedPath: spaced)
        }
        let routeIndex: Int
        let upstreamPath: [UInt8]
        let key: ArraySlice<UInt8>
        switch routeDecision {
        case .serviceRoot:
            return .serviceRoot
        case .noSuchBucket(let name):
            throw .noSuchBucket(name)
        case .bucket(let index, let path, let objectKey):
            routeIndex = index
            upstreamPath = path
            key = objectKey
        }
        let route = settings.router.routes[routeIndex]
        var query: [QueryParameter]
        do {
            query = try URIEncoding.parseQuery(rawQuery: rawQuery.utf8)
        } catch {
            throw .badRequest("invalid percent-encoding in the query")
        }
        try harden(decodedPath: [], queryNames: query.isEmpty ? [] : query.map(\.name))
        // Client presign parameters never reach the upstream (DESIGN §6).
        if query.contains(where: { PresignParameters.isPresignParameter(name: $0.name) }) {
            query.removeAll { PresignParameters.isPresignParameter(name: $0.name) }
        }
        let principal = try identify(principal, head: head, settings: settings)
        let verdict = try authorize(head: head, route: route, key: key, query: query, principal: principal)
        if settings.upstreams[route.upstreamIndex].isR2,
            let missing = R2Compatibility.unsupported(verdict.operation, headers: head.headers)
        {
            throw .notImplemented(missing)
        }
        if let maxUpload = route.maxUploadSize, case .contentLength(let length) = framing, length > maxUpload {
            throw .entityTooLarge
        }
        let putSize = settings.upstreams[route.upstreamIndex].maxPutSize
        try requireWithinPutSize(head: head, framing: framing, limit: putSize)
        // Fields read in place: a copy of the whole UpstreamTarget retains every field of it.
        let upstreamIndex = route.upstreamIndex
        let path = URIEncoding.encode(upstreamPath, keepingSlash: true)
        if route.redirect && (verdict.operation == .getObject || verdict.operation == .headObject) {
            return .redirect(RedirectPlan(route: route, method: head.method, path: path, query: query))
        }
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(head.headers.count + 2)
        headers.append(("Host", settings.upstreams[upstreamIndex].hostHeader))
        let connectionListed = connectionTokens(head.headers)
        var clientPayload: String? = nil
        for (name, value) in head.headers {
            let disposition = headerDisposition(
                name, connectionListed: connectionListed, toR2: settings.upstreams[upstreamIndex].isR2)
            if disposition == .payloadHash { clientPayload = value }
            if disposition != .forward && disposition != .copySource { continue }
            if disposition == .copySource {
                // CopyObject / UploadPartCopy read the source with presignd's keys: the source must
                // be a bucket presignd serves on the same upstream, inside its policy.
                switch CopySource.rewrite(
                    value, settings: settings, upstreamIndex: route.upstreamIndex, principal: principal,
                    operation: verdict.operation)
                {
                case .failure(let error): throw error
                case .success(let rewritten): headers.append((name, rewritten))
                }
                continue
            }
            headers.append((name, value))
        }
        var payload: PayloadHash = framing == .none ? .emptyBody : .unsigned
        if let clientPayload {
            guard let parsed = PayloadHash(clientValue: clientPayload) else {
                throw .badRequest("x-amz-content-sha256 is neither a SHA-256 hex digest nor a known mode")
            }
            payload = parsed
        }
        var body = try bodyPlan(
            head: head, framing: framing, payload: payload,
            forwardsAWSChunked: settings.upstreams[upstreamIndex].forwardsAWSChunked,
            readsWhole: verdict.operation == .deleteObjects, headers: &headers)
        switch body {
        case .spool(true, _):
            payload = .unsigned
        case .decodeAWSChunked(let plan):
            if let maxUpload = route.maxUploadSize, plan.decodedLength > maxUpload { throw .entityTooLarge }
            payload = plan.reframes ? .streamingUnsignedTrailer : .unsigned
            headers.append(("Content-Length", String(plan.upstreamLength)))
        default:
            break
        }
        let deleteKeysPolicy = try planDeleteBody(verdict, route: route, framing: framing, body: &body)
        if case .contentLength(let length) = framing, body == .stream {
            headers.append(("Content-Length", String(length)))
        }
        let request = SignableRequest(method: head.method, path: path, query: query, headers: headers)
        return .forward(
            ForwardPlan(
                upstreamIndex: route.upstreamIndex, bucket: route.name, logPath: path, request: request,
                payload: payload, body: body, maxUploadSize: route.maxUploadSize, verdict: verdict,
                deleteKeysPolicy: deleteKeysPolicy,
                cacheInvalidation: settings.caches.stores.isEmpty
                    ? nil
                    : CacheInvalidation.of(
                        action: verdict.action, upstream: settings.upstreams[upstreamIndex].objectNamespace,
                        bucket: route.name, key: String(decoding: key, as: UTF8.self)),
                cacheRead: cacheReadTarget(route: route, operation: verdict.operation, key: key, settings: settings)))
    }

    /// The cache lookup of an object GET or HEAD, when the bucket's cache directory is open (issue 23).
    static func cacheReadTarget(
        route: BucketRoute, operation: S3Operation, key: ArraySlice<UInt8>, settings: ProxySettings
    )
        -> CacheReadTarget?
    {
        guard operation == .getObject || operation == .headObject, let config = route.cache,
            settings.caches[config.directory] != nil
        else { return nil }
        let name = ObjectName(
            upstream: settings.upstreams[route.upstreamIndex].objectNamespace, bucket: route.name,
            key: String(decoding: key, as: UTF8.self))
        // A name that cannot be hashed (OpenSSL failing) is not cached: the request goes upstream as it came.
        guard let cacheKey = try? SliceStore.key(name) else { return nil }
        return CacheReadTarget(directory: config.directory, name: name, key: cacheKey, config: config)
    }

    /// What the rewriter does with one client header.
    enum HeaderDisposition: Equatable {
        /// Forwarded as it came (the signer then signs it or not: HeaderPolicy).
        case forward
        /// `x-amz-copy-source`: rewritten, then forwarded.
        case copySource
        /// `x-amz-content-sha256`: read as the payload mode, not forwarded (the signer sets its own).
        case payloadHash
        /// Framing, hop-by-hop, listed in `Connection`, or stripped by HeaderPolicy.
        case drop
    }

    /// The header's disposition, from its name lower-cased on the stack (no String per header).
    /// `toR2`: the upstream is R2, which takes the `cf-*` extensions `HeaderPolicy.r2ExtensionHeaders` names;
    /// every other upstream gets none of them.
    static func headerDisposition(_ name: String, connectionListed: [String], toR2: Bool = false)
        -> HeaderDisposition
    {
        var name = name
        return name.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { lower in
                for index in bytes.indices { lower[index] = ASCII.lowercased(bytes[index]) }
                let lower = UnsafeBufferPointer(lower)
                if ASCII.equalsLowercase(lower, "x-amz-content-sha256") { return .payloadHash }
                if ASCII.equalsLowercase(lower, "content-length") || ASCII.equalsLowercase(lower, "transfer-encoding")
                    || ASCII.equalsLowercase(lower, "host")
                {
                    return .drop
                }
                if !connectionListed.isEmpty && connectionListed.contains(String(decoding: lower, as: UTF8.self)) {
                    return .drop
                }
                if HeaderPolicy.rule(forLowercasedName: lower) == .strip { return .drop }
                if !toR2 && lower.count > 3 && lower[0] == UInt8(ascii: "c") && lower[1] == UInt8(ascii: "f")
                    && lower[2] == UInt8(ascii: "-")
                {
                    return .drop
                }
                return ASCII.equalsLowercase(lower, "x-amz-copy-source") ? .copySource : .forward
            }
        }
    }

    /// The origin-form target: absolute-form is accepted only when it names the same authority as
    /// the `Host` header (never a way to reach another host: no open proxy).
    static func originForm(of head: RequestHead) -> Result<Substring, ProxyError> {
        let target = head.target
        if target.hasPrefix("/") { return .success(target[...]) }
        // RFC 3986 §3.1, §3.2.2: scheme and host are case-insensitive.
        let isHTTP = ASCII.equalsLowercase(target.utf8.prefix(7), "http://")
        guard isHTTP || ASCII.equalsLowercase(target.utf8.prefix(8), "https://") else {
            return .failure(.badRequest("unsupported request target form"))
        }
        let afterScheme = target.utf8.dropFirst(isHTTP ? 7 : 8)
        let slash = afterScheme.firstIndex(of: UInt8(ascii: "/")) ?? afterScheme.endIndex
        let authority = Substring(afterScheme[..<slash])
        guard let host = head.headers["host"], ASCII.equalsIgnoringCase(host, String(authority)) else {
            return .failure(.badRequest("absolute-form target names a host other than presignd"))
        }
        return .success(slash == afterScheme.endIndex ? "/" : Substring(afterScheme[slash...]))
    }

    /// Splits `path?query`; the fragment is never sent (SIGV4-S3-RULES §3).
    static func splitTarget(_ target: Substring) -> (path: Substring, query: Substring) {
        // On UTF-8 code units: `Character` search runs grapheme breaking on every byte. Offsets found in the
        // contiguous bytes (one pass), then turned into indices.
        let utf8 = target.utf8
        let offsets: (hash: Int?, question: Int?)? = utf8.withContiguousStorageIfAvailable { bytes in
            var question: Int? = nil
            for offset in bytes.indices {
                if bytes[offset] == UInt8(ascii: "#") { return (offset, question) }
                if question == nil && bytes[offset] == UInt8(ascii: "?") { question = offset }
            }
            return (nil, question)
        }
        var end = utf8.endIndex
        let questionIndex: Substring.UTF8View.Index?
        if let offsets {
            if let hash = offsets.hash { end = utf8.index(utf8.startIndex, offsetBy: hash) }
            questionIndex = offsets.question.map { utf8.index(utf8.startIndex, offsetBy: $0) }
        } else {
            if let hash = utf8.firstIndex(of: UInt8(ascii: "#")) { end = hash }
            questionIndex = utf8[..<end].firstIndex(of: UInt8(ascii: "?"))
        }
        guard let question = questionIndex else {
            return (Substring(utf8[..<end]), "")
        }
        return (Substring(utf8[..<question]), Substring(utf8[utf8.index(after: question)..<end]))
    }

    /// Header names listed in `Connection` (hop-by-hop, RFC 9110 §7.6.1), parsed as the signer does.
    static func connectionTokens(_ headers: HTTPHeaders) -> [String] {
        // Most requests carry no `Connection` header: no array is built for them.
        guard headers.contains(name: "connection") else { return [] }
        return headers.values("connection").flatMap(HeaderPolicy.connectionListedNames)
    }

    /// The path part of a target, for error bodies.
    static func resource(of target: String) -> String {
        String(splitTarget(target[...]).path)
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
