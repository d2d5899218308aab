import PresigndConfig
import PresigndHTTP1
import PresigndSigV4

/// What a caller asks to presign: the API's JSON body or `presignd presign`'s options.
public struct PresignRequest: Sendable {
    /// The bucket's configured `name` (its name upstream).
    public var bucket: String
    /// The object key, literal (not percent-encoded).
    public var key: String
    /// GET, HEAD, PUT or DELETE.
    public var method: String = "GET"
    /// Seconds; nil means one hour, or the bucket's `max_presign_expiry` when shorter.
    public var expires: Int? = nil
    /// PUT only: the `Content-Type` the uploader must send (signed).
    public var contentType: String? = nil
    /// PUT only: the exact `Content-Length` the uploader must send (signed).
    public var contentLength: Int? = nil
    /// GET/HEAD only: `response-*` overrides as query names (`response-content-disposition`) and values.
    public var responseOverrides: [(name: String, value: String)] = []
    /// `versionId` of the object, for GET, HEAD and DELETE.
    public var versionID: String? = nil

    public init(bucket: String, key: String, method: String = "GET") {
        self.bucket = bucket
        self.key = key
        self.method = method
    }
}

/// A refused presign request: HTTP status, a stable code, the field at fault and a sentence.
public struct PresignFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    /// The request field at fault, as the JSON API names it (`bucket`, `key`, `expires`, `content_type`, …).
    public var field: String
    public var message: String

    public var description: String { "\(field): \(message)" }

    /// `{"error": {"code": …, "field": …, "message": …}}`.
    var json: String {
        JSONWriter.render([
            ("error", .object([("code", .string(code)), ("field", .string(field)), ("message", .string(message))]))
        ])
    }

    static func invalid(_ field: String, _ message: String) -> PresignFailure {
        PresignFailure(status: 400, code: "InvalidArgument", field: field, message: message)
    }

    static func denied(_ field: String, _ message: String) -> PresignFailure {
        PresignFailure(status: 403, code: "AccessDenied", field: field, message: message)
    }
}

/// A minted link and what its user must know.
public struct PresignedLink: Sendable {
    public var url: String
    public var method: String
    public var bucket: String
    public var expiresAt: Int
    public var expiresIn: Int
    /// Headers the user must send with exactly these values, because they were signed.
    public var headers: [(name: String, value: String)]

    public init(
        url: String, method: String, bucket: String, expiresAt: Int, expiresIn: Int,
        headers: [(name: String, value: String)]
    ) {
        self.url = url
        self.method = method
        self.bucket = bucket
        self.expiresAt = expiresAt
        self.expiresIn = expiresIn
        self.headers = headers
    }

    public var expiresAtISO8601: String { AmzDate(epochSeconds: expiresAt).iso8601 }

    /// `{"url", "method", "expires_at", "expires_in", "headers": {…}}`.
    public var json: String {
        JSONWriter.render([
            ("url", .string(url)), ("method", .string(method)), ("expires_at", .string(expiresAtISO8601)),
            ("expires_in", .int(expiresIn)), ("headers", .object(headers.map { ($0.name, .string($0.value)) })),
        ])
    }
}

/// The presign API's core (issue 7), pure: a request and the time in, policy checks, a signed link out.
///
/// Serves the admin listener (main thread) and `presignd presign --config`. Not `Sendable`: it owns one
/// `Signer` per upstream, never shared with the workers.
public final class PresignService {
    /// The `response-*` query parameters S3 honours on GET and HEAD.
    public static let responseOverrideNames = [
        "response-cache-control", "response-content-disposition", "response-content-encoding",
        "response-content-language", "response-content-type", "response-expires",
    ]
    static let defaultExpiry = 3600

    let settings: ProxySettings
    private var signers: [Signer?]
    /// The daemon's latest credentials for refreshing upstreams (`credential_process`), by name.
    var fetchedCredentials: [String: UpstreamCredentialState] = [:]
    /// The daemon's upstream clocks (issue 21 §4): a link is signed at the upstream's time, so a host whose clock
    /// drifts still hands out links the upstream accepts. Nil (the command line): the time as given.
    var clocks: UpstreamClocks?

    init(settings: ProxySettings) {
        self.settings = settings
        self.signers = Array(repeating: nil, count: settings.upstreams.count)
    }

    /// For the command line: the same mapping the daemon uses (TLS contexts included, so a bad `ca_file`
    /// fails here too).
    public convenience init(configuration: Configuration) throws(StartupError) {
        self.init(settings: try DaemonPlan(configuration: configuration).settings)
    }

    /// The upstream name a bucket is served by.
    public func upstreamName(ofBucket name: String) -> String? {
        settings.router.routes.first { $0.name == name }.map { settings.upstreams[$0.upstreamIndex].name }
    }

    /// Checks `request` against the bucket's policy and signs it at `date`.
    public func presign(_ request: PresignRequest, date: AmzDate, principal: Principal = Principal(peer: .unknown))
        -> Result<PresignedLink, PresignFailure>
    {
        let route: BucketRoute
        switch Self.check(request, routes: settings.router.routes, principal: principal) {
        case .failure(let failure): return .failure(failure)
        case .success(let found): route = found
        }
        let method = ASCII.uppercased(request.method)
        var expires = request.expires ?? min(Self.defaultExpiry, route.maxPresignExpiry)
        let upstream = settings.upstreams[route.upstreamIndex]
        if upstream.refreshesCredentials, case .valid(_, let expiry?)? = fetchedCredentials[upstream.name] {
            // A link carries the key it was signed with and stops working when that key expires: never promise
            // longer (the answer's expires_in and expires_at say what the link really gets).
            expires = min(expires, max(1, expiry / 1000 - date.epochSeconds))
        }
        var query: [QueryParameter] = request.responseOverrides.map { QueryParameter(name: $0.name, value: $0.value) }
        if let version = request.versionID { query.append(QueryParameter(name: "versionId", value: version)) }
        var headers: [(name: String, value: String)] = []
        if let type = request.contentType { headers.append(("Content-Type", type)) }
        if let length = request.contentLength { headers.append(("Content-Length", String(length))) }
        let path = Self.objectPath(bucket: route.name, key: request.key)
        if upstream.refreshesCredentials, let reason = unavailability(of: upstream) {
            return .failure(
                PresignFailure(
                    status: 503, code: "ServiceUnavailable", field: "",
                    message: "no valid credentials for upstream '\(upstream.name)': \(reason)"))
        }
        do {
            let signer = try signer(for: route.upstreamIndex)
            let presigned = try signer.presign(
                method: method, host: upstream.hostHeader, path: path, query: query, headers: headers,
                expires: expires, date: corrected(date, upstream: upstream.name),
                scheme: upstream.usesTLS ? "https" : "http")
            return .success(
                PresignedLink(
                    url: presigned.url, method: method, bucket: route.name, expiresAt: presigned.expiresAt,
                    expiresIn: expires, headers: presigned.signedHeaders))
        } catch {
            return .failure(PresignFailure(status: 500, code: "InternalError", field: "", message: "signing failed"))
        }
    }

    /// The API's JSON in, JSON out: `(status, body)`.
    func handle(body: [UInt8], date: AmzDate, principal: Principal = Principal(peer: .unknown))
        -> (status: Int, body: String, link: PresignedLink?)
    {
        let request: PresignRequest
        switch PresignRequestJSON.decode(body) {
        case .failure(let failure): return (failure.status, failure.json, nil)
        case .success(let decoded): request = decoded
        }
        switch presign(request, date: date, principal: principal) {
        case .failure(let failure): return (failure.status, failure.json, nil)
        case .success(let link): return (200, link.json, link)
        }
    }

    /// `date` on the upstream's clock, when the daemon's clocks are known.
    private func corrected(_ date: AmzDate, upstream name: String) -> AmzDate {
        guard let offset = clocks?.clock(named: name).offsetSeconds, offset != 0 else { return date }
        return AmzDate(epochSeconds: date.epochSeconds + offset)
    }

    /// Why a refreshing upstream cannot sign now, or nil when its credentials are valid.
    private func unavailability(of upstream: UpstreamTarget) -> String? {
        switch fetchedCredentials[upstream.name] {
        case .valid?: nil
        case .unavailable(let reason)?: reason
        case nil: "its credentials have not been fetched yet"
        }
    }

    private func signer(for index: Int) throws(SigV4Error) -> Signer {
        let upstream = settings.upstreams[index]
        if upstream.refreshesCredentials {
            // Not cached: the keys change with every refresh (and the API is not a hot path).
            guard case .valid(let credentials, _)? = fetchedCredentials[upstream.name] else {
                throw .crypto("credentials not fetched yet")
            }
            return try Signer(credentials: credentials, region: upstream.region, service: "s3")
        }
        if let signer = signers[index] { return signer }
        let signer = try Signer(credentials: upstream.credentials, region: upstream.region, service: "s3")
        signers[index] = signer
        return signer
    }

    /// `/bucket/key`, UriEncoded once keeping `/` (SIGV4-S3-RULES §2.1, path-style upstream).
    static func objectPath(bucket: String, key: String) -> String {
        "/" + URIEncoding.encode(Array(bucket.utf8), keepingSlash: false) + "/"
            + URIEncoding.encode(Array(key.utf8), keepingSlash: true)
    }
}
