import PresigndConfig
import PresigndHTTP1
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// The presign API's settings from `[server]`: `presign_api`, `admin_token_file` and `cors_allowed_origins`.
struct AdminAPISettings: Sendable {
    /// Who may call it (`ServerConfig.presignAPIAccess`).
    var access: ServerConfig.PresignAPIAccess = .open
    /// The file holding the bearer token; read on every request, so it can be rotated without a reload.
    var tokenFile: String? = nil
    /// Origins answered with CORS headers (`"*"` allows any).
    var corsAllowedOrigins: [String] = []
}

extension LocalResponse {
    /// An admin answer in JSON (the presign API): `json` and a newline.
    init(status: Int, json: String, headers: [(name: String, value: String)] = []) {
        self.init(status: status, contentType: "application/json", body: Array((json + "\n").utf8), headers: headers)
    }

    /// An admin answer in plain text (`/healthz`, `/readyz`, errors): `text` and a newline.
    init(status: Int, text: String, headers: [(name: String, value: String)] = []) {
        self.init(status: status, contentType: "text/plain", body: Array((text + "\n").utf8), headers: headers)
    }
}

/// The admin thread's presign state: one `PresignService` (own signers) per running configuration, and the
/// links-issued counters, which outlive reloads.
struct PresignAdminState {
    struct LinkKey: Hashable {
        var bucket: String
        var method: String
    }

    var service: PresignService?
    var linksIssued: [LinkKey: Int] = [:]

    /// The service for `settings`, rebuilt after a reload (new credentials, new buckets).
    mutating func service(for settings: ProxySettings) -> PresignService {
        if let service, service.settings === settings { return service }
        let fresh = PresignService(settings: settings)
        service = fresh
        return fresh
    }
}

/// `POST /v1/presign` (issue 7) and `POST /v1/credentials` (issue 22), and their CORS preflight on the admin
/// listener: one set of token, origin and media-type rules for both.
extension AdminServer {
    static let presignPath = "/v1/presign"
    static let credentialsPath = "/v1/credentials"

    /// The request's path without its query.
    static func path(of head: RequestHead) -> String {
        head.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
    }

    /// A JSON API request, whose body is read before it is answered.
    func isAPIPath(_ head: RequestHead) -> Bool {
        let path = Self.path(of: head)
        return path == Self.presignPath || path == Self.credentialsPath || path == Self.cachePurgePath
    }

    func tooLarge(_ head: RequestHead) -> LocalResponse {
        let failure = PresignFailure(
            status: 413, code: "EntityTooLarge", field: "",
            message: "the body is larger than max_admin_body_size (\(ByteSize.format(limits.maxAdminBodyBytes)))")
        return LocalResponse(status: 413, json: failure.json, headers: corsHeaders(for: head) ?? [])
    }

    /// Answers one API request whose body has been read.
    func respondAPI(head: RequestHead, body: [UInt8], isLoopbackPeer: Bool, principal: Principal)
        -> LocalResponse
    {
        func error(
            _ status: Int, _ code: String, _ field: String, _ message: String,
            _ headers: [(name: String, value: String)] = []
        )
            -> LocalResponse
        {
            let failure = PresignFailure(status: status, code: code, field: field, message: message)
            return LocalResponse(status: status, json: failure.json, headers: headers + [("Cache-Control", "no-store")])
        }
        // CORS (Fetch standard §3.2): a browser origin must be listed; other callers send no Origin.
        guard let cors = corsHeaders(for: head) else {
            return error(403, "OriginNotAllowed", "origin", "origin is not in cors_allowed_origins")
        }
        if head.method == "OPTIONS" {
            var headers = cors
            if head.headers["origin"] != nil {
                headers += [
                    ("Access-Control-Allow-Methods", "POST, OPTIONS"),
                    ("Access-Control-Allow-Headers", "authorization, content-type"), ("Access-Control-Max-Age", "600"),
                ]
            }
            return LocalResponse(
                status: 204, contentType: "application/json", headers: headers + [("Allow", "POST, OPTIONS")])
        }
        guard head.method == "POST" else {
            return error(405, "MethodNotAllowed", "", "use POST", cors + [("Allow", "POST, OPTIONS")])
        }
        if let (failure, headers) = refusal(of: head, isLoopbackPeer: isLoopbackPeer) {
            return error(failure.status, failure.code, failure.field, failure.message, cors + headers)
        }
        let mediaType = (head.headers["content-type"] ?? "").split(separator: ";").first.map {
            ASCII.lowercased(String($0.trimmingSpaces()))
        }
        guard mediaType == "application/json" else {
            return error(415, "UnsupportedMediaType", "content-type", "send Content-Type: application/json", cors)
        }
        if Self.path(of: head) == Self.cachePurgePath {
            return respondCachePurge(body: body, headers: cors + [("Cache-Control", "no-store")])
        }
        if Self.path(of: head) == Self.credentialsPath {
            return respondCredentials(body: body, principal: principal, headers: cors + [("Cache-Control", "no-store")])
        }
        let service = presign.service(for: daemon.settings)
        service.fetchedCredentials = daemon.fetchedCredentials
        service.clocks = daemon.clocks
        let result = service.handle(body: body, date: AmzDate.now(), principal: principal)
        if let link = result.link {
            presign.linksIssued[PresignAdminState.LinkKey(bucket: link.bucket, method: link.method), default: 0] += 1
            logger.info(
                "Presigned link issued",
                metadata: ["bucket": link.bucket, "http.method": link.method, "expires.s": String(link.expiresIn)])
        }
        return LocalResponse(status: result.status, json: result.body, headers: cors + [("Cache-Control", "no-store")])
    }

    /// Why the admin API refuses this caller, per `presign_api` (issue 19 §6), or nil when it may go on.
    func refusal(of head: RequestHead, isLoopbackPeer: Bool) -> (PresignFailure, [(name: String, value: String)])? {
        let api = daemon.settings.adminAPI
        switch api.access {
        case .off:
            return (
                PresignFailure(
                    status: 403, code: "AccessDenied", field: "",
                    message: "the presign API is off on this listener; set admin_token_file, or presign_api = \"open\""),
                []
            )
        case .token:
            guard let tokenFile = api.tokenFile, let token = Self.readToken(tokenFile) else {
                logger.error(
                    "Cannot read admin_token_file; refusing presign requests",
                    metadata: ["path": api.tokenFile ?? ""])
                return (
                    PresignFailure(
                        status: 500, code: "TokenUnavailable", field: "", message: "the admin token file cannot be read"
                    ), []
                )
            }
            let challenge = [(name: "WWW-Authenticate", value: "Bearer realm=\"presignd\"")]
            guard let presented = BearerToken.parse(head.headers["authorization"]) else {
                return (
                    PresignFailure(
                        status: 401, code: "MissingToken", field: "authorization", message: "a bearer token is required"
                    ), challenge
                )
            }
            guard BearerToken.constantTimeEquals(Array(presented.utf8), token) else {
                return (
                    PresignFailure(
                        status: 401, code: "InvalidToken", field: "authorization", message: "the bearer token is wrong"),
                    challenge
                )
            }
            return nil
        case .open:
            // No token: loopback only, and only under a loopback Host (a DNS-rebinding page sends its own name).
            guard isLoopbackPeer else {
                return (
                    PresignFailure(
                        status: 403, code: "AccessDenied", field: "",
                        message: "without admin_token_file the presign API is loopback-only"), []
                )
            }
            guard Self.isLocalHost(head.headers["host"]) else {
                return (
                    PresignFailure(
                        status: 403, code: "AccessDenied", field: "host",
                        message: "Host must be localhost or an IP address"), []
                )
            }
            return nil
        }
    }

    /// CORS response headers: `[]` without an `Origin`, nil when the origin is not allowed.
    func corsHeaders(for head: RequestHead) -> [(name: String, value: String)]? {
        guard let origin = head.headers["origin"] else { return [] }
        let allowed = daemon.settings.adminAPI.corsAllowedOrigins
        guard allowed.contains("*") || allowed.contains(origin) else { return nil }
        return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
    }

    /// `localhost` or an IP literal, with an optional port.
    static func isLocalHost(_ host: String?) -> Bool {
        guard var host = host.map(ASCII.lowercased), !host.isEmpty else { return false }
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            return IPAddress(String(host[host.index(after: host.startIndex)..<close])) != nil
        }
        if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        return host == "localhost" || IPAddress(host) != nil
    }

    /// The token file's first line, trimmed; nil when unreadable or empty.
    static func readToken(_ path: String) -> [UInt8]? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress! + total, raw.count - total)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            total += count
        }
        var line = bytes[..<total].prefix { $0 != 0x0A && $0 != 0x0D }
        while let last = line.last, last == 0x20 || last == 0x09 { line = line.dropLast() }
        while let first = line.first, first == 0x20 || first == 0x09 { line = line.dropFirst() }
        return line.isEmpty ? nil : Array(line)
    }
}
