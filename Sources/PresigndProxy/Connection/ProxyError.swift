import PresigndPolicy

/// presignd's own failures, answered to the client as S3-style XML errors so SDKs surface them.
/// Upstream errors are never wrapped: they pass through untouched.
enum ProxyError: Error, Equatable {
    case badRequest(String)
    /// An upload's checksum (an aws-chunked trailer) is missing or does not match the bytes received (issue 21).
    case badDigest(String)
    case requestLineTooLong
    case headersTooLarge
    case requestTimeout
    case notImplemented(String)
    case noSuchBucket(String)
    /// A 404 the read cache remembers (`negative_ttl`), answered without asking upstream.
    case noSuchKey
    case accessDenied(String)
    /// Refused by the policy engine: the denial, and the operation's name (or "unknown") for logs and metrics.
    case policyDenied(PolicyDenial, operation: String)
    case entityTooLarge
    case versionNotSupported
    case upstreamDNS(String)
    case upstreamConnect(String)
    case upstreamTLS(String)
    case upstreamProtocol(String)
    case upstreamTimeout
    case serviceUnavailable(String)
    case internalError(String)
    /// A process-wide limit is reached (connections, spool space): S3 clients back off and retry (issue 20).
    case slowDown(String)
    /// The spool's file system is full (`ENOSPC`): nothing was sent upstream.
    case insufficientStorage
    /// A body moved slower than `min_body_rate`.
    case bodyTooSlow

    /// The HTTP status and S3 error code: the one place that maps proxy errors to the wire.
    var statusAndCode: (status: Int, code: String) {
        switch self {
        case .badRequest: (400, "InvalidRequest")
        case .badDigest: (400, "BadDigest")
        case .requestLineTooLong: (414, "RequestURITooLong")
        case .headersTooLarge: (431, "RequestHeaderSectionTooLarge")
        case .requestTimeout: (408, "RequestTimeout")
        case .notImplemented: (501, "NotImplemented")
        case .noSuchBucket: (404, "NoSuchBucket")
        case .noSuchKey: (404, "NoSuchKey")
        case .accessDenied: (403, "AccessDenied")
        case .policyDenied(let denial, _):
            switch denial.reason {
            case .dotSegment: (400, "InvalidURI")
            case .methodOverride, .headerInQuery: (400, "InvalidRequest")
            case .legacyAuthentication: (400, "AuthorizationQueryParametersError")
            case .malformedDeleteBody: (400, "MalformedXML")
            default: (403, "AccessDenied")
            }
        case .entityTooLarge: (413, "EntityTooLarge")
        case .versionNotSupported: (505, "HTTPVersionNotSupported")
        case .upstreamDNS: (502, "UpstreamDNSFailure")
        case .upstreamConnect: (502, "UpstreamConnectFailure")
        case .upstreamTLS: (502, "UpstreamTLSFailure")
        case .upstreamProtocol: (502, "UpstreamProtocolError")
        case .upstreamTimeout: (504, "UpstreamTimeout")
        case .serviceUnavailable: (503, "ServiceUnavailable")
        case .internalError: (500, "InternalError")
        case .slowDown: (503, "SlowDown")
        case .insufficientStorage: (507, "InsufficientStorage")
        case .bodyTooSlow: (408, "RequestTimeout")
        }
    }

    var message: String {
        switch self {
        case .badRequest(let detail): "The request is malformed: \(detail)."
        case .badDigest(let detail):
            "The checksum you specified did not match what was received: \(detail). Nothing was stored."
        case .requestLineTooLong: "The request line is too long."
        case .headersTooLarge: "The request header section is too large or has too many fields."
        case .requestTimeout: "The request was not received in time."
        case .notImplemented(let detail): "Not implemented: \(detail)."
        case .noSuchBucket:
            "The specified bucket is not configured in presignd: no [[bucket]] is mounted at this path. Add one "
                + "(name, and mount if not /NAME) or use a configured bucket's path (presignd check-config lists them)."
        case .noSuchKey:
            "The specified key does not exist (the upstream answered 404 within the cache's negative_ttl)."
        case .accessDenied(let detail): "Access denied by presignd policy: \(detail)."
        case .policyDenied(let denial, _):
            (denial.isMalformed ? "Refused by presignd: " : "Access denied by presignd policy: ") + denial.message
                + " (rule: \(denial.rule))."
        case .entityTooLarge: "The request body exceeds the configured maximum size."
        case .versionNotSupported: "Only HTTP/1.0 and HTTP/1.1 are supported."
        case .upstreamDNS(let detail):
            "The upstream host name could not be resolved: \(detail). Check the upstream's endpoint in presignd's "
                + "configuration (for provider = \"r2\", account_id: the Account ID on the Cloudflare dashboard's R2 "
                + "page) and this machine's DNS."
        case .upstreamConnect(let detail):
            "The upstream could not be reached: \(detail). Check the host and port of the upstream's endpoint in "
                + "presignd's configuration, and that the storage service is running there."
        case .upstreamTLS(let detail):
            "The upstream TLS handshake or certificate check failed: \(detail). Check that the endpoint speaks "
                + "HTTPS on that port (http:// for a plain-HTTP test server) and, for a private CA, set ca_file."
        case .upstreamProtocol(let detail): "The upstream sent an invalid response: \(detail)."
        case .upstreamTimeout:
            "The upstream did not answer in time (the upstream's connect_timeout or first_byte_timeout in presignd's "
                + "configuration)."
        case .serviceUnavailable(let detail): "presignd is not accepting this request: \(detail)."
        case .internalError(let detail): "presignd failed: \(detail)."
        case .slowDown(let detail): "Please reduce your request rate: \(detail)."
        case .insufficientStorage:
            "presignd's spool directory is full: the upload was not sent. Retry later; the operator should check "
                + "spool_directory's free space and max_spool_total."
        case .bodyTooSlow: "The request body arrived slower than the server's minimum transfer rate (min_body_rate)."
        }
    }

    /// The `Retry-After` seconds for errors that pass once load goes down.
    var retryAfterSeconds: Int? {
        switch self {
        case .slowDown, .insufficientStorage: 1
        default: nil
        }
    }

    /// The bucket element to include, when there is one.
    var bucketName: String? {
        if case .noSuchBucket(let name) = self { return name }
        return nil
    }

    /// `<Error>` XML body as S3 writes it.
    func xmlBody(requestID: String, resource: String) -> [UInt8] {
        let (_, code) = statusAndCode
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>"
        xml += XMLText.escaped(message) + "</Message>"
        if let bucketName { xml += "<BucketName>" + XMLText.escaped(bucketName) + "</BucketName>" }
        xml += "<Resource>" + XMLText.escaped(resource) + "</Resource>"
        xml += "<RequestId>" + requestID + "</RequestId></Error>\n"
        return Array(xml.utf8)
    }
}

/// XML character escaping for element content.
enum XMLText {
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters even escaped.
                if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r" {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
