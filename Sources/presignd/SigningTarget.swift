import PresigndConfig
import PresigndHTTP1
import PresigndProxy
import PresigndSigV4

/// A configuration file that does not load: every error with `file:line:col`, exit 78.
struct ConfigFailure: Error {
    var errors: ConfigErrors
}

/// Credentials, region, service and endpoint a request is signed for, from flags/`AWS_*` or from
/// `--config PATH [--upstream NAME]` (then `configuration` is set, and `presign` applies the bucket policy).
struct SigningTarget {
    var credentials: Credentials
    var region: String
    var service: String
    var endpoint: RequestURL?
    var configuration: Configuration? = nil
    var upstreamName: String? = nil
}

/// The CLI's shared SigV4 edge: target resolution, URL splitting, dates and JSON output (`sign`, `presign`).
enum SigningTargets {
    static func parseDate(_ text: String?) throws(UsageError) -> AmzDate {
        guard let text else { return AmzDate.now() }
        guard let date = AmzDate(parsing: text) else {
            throw UsageError(message: "--date must look like 20260301T000000Z, got '\(text)'")
        }
        return date
    }

    static func describe(_ error: SigV4Error) -> String {
        switch error {
        case .malformedPercentEncoding(let offset): "malformed percent-encoding at offset \(offset)"
        case .invalidUTF8: "decoded bytes are not UTF-8"
        case .invalidExpiry(let seconds): "expiry \(seconds) is outside 1...604800 seconds"
        case .crypto(let message): "OpenSSL: \(message)"
        }
    }

    /// The one place credentials, region and endpoint are resolved.
    ///
    /// With `--config`: the upstream named by `--upstream`, else the upstream of `bucket` (presign), else the
    /// only upstream, else the one whose endpoint host is `host`. Without: flags first, then `AWS_*` variables.
    static func resolve(
        _ options: Arguments, environment: [String: String], bucket: String? = nil, host: String? = nil
    ) throws -> SigningTarget {
        if let path = options.value("config") {
            for flag in ["access-key-id", "secret-access-key", "session-token", "region", "endpoint"]
            where options.value(flag) != nil {
                throw UsageError(message: "--\(flag) conflicts with --config (the configuration supplies it)")
            }
            return try fromConfig(path: path, options: options, environment: environment, bucket: bucket, host: host)
        }
        if options.value("upstream") != nil { throw UsageError(message: "--upstream needs --config PATH") }
        func pick(_ option: String, _ variable: String) -> String? {
            if let value = options.value(option), !value.isEmpty { return value }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }
        guard let accessKeyID = pick("access-key-id", "AWS_ACCESS_KEY_ID") else {
            throw UsageError(message: "no access key: pass --config, --access-key-id or set AWS_ACCESS_KEY_ID")
        }
        guard let secret = pick("secret-access-key", "AWS_SECRET_ACCESS_KEY") else {
            throw UsageError(message: "no secret key: pass --config, --secret-access-key or set AWS_SECRET_ACCESS_KEY")
        }
        let token = pick("session-token", "AWS_SESSION_TOKEN")
        let region = pick("region", "AWS_REGION") ?? "us-east-1"
        let endpoint = try options.value("endpoint").map { (text) throws(UsageError) in try RequestURL(text) }
        return SigningTarget(
            credentials: Credentials(
                accessKeyID: accessKeyID, secretAccessKey: Secret(secret), sessionToken: token.map(Secret.init)),
            region: region, service: options.value("service") ?? "s3", endpoint: endpoint)
    }

    private static func fromConfig(
        path: String, options: Arguments, environment: [String: String], bucket: String?, host: String?
    ) throws -> SigningTarget {
        let configuration: Configuration
        switch ConfigLoader.load(path: path, environment: environment) {
        case .failure(let errors): throw ConfigFailure(errors: errors)
        case .success(let loaded): configuration = loaded
        }
        let names = configuration.upstreamNames
        let name: String
        if let wanted = options.value("upstream") {
            guard configuration.upstreams[wanted] != nil else {
                throw UsageError(
                    message: "--upstream: no [upstream.\(wanted)] in \(path) (have: \(names.joined(separator: ", ")))")
            }
            name = wanted
        } else if let bucket {
            guard let found = configuration.buckets.first(where: { $0.name == bucket }) else {
                let known = configuration.buckets.map(\.name).joined(separator: ", ")
                throw UsageError(message: "bucket: '\(bucket)' is not configured in \(path) (have: \(known))")
            }
            name = found.upstream
        } else if names.count == 1 {
            name = names[0]
        } else if let host,
            let match = onlyMatch(names.filter { configuration.upstreams[$0]?.endpoint.hostHeader == host })
        {
            name = match
        } else {
            throw UsageError(
                message: "\(path) has several upstreams (\(names.joined(separator: ", "))): pass --upstream NAME")
        }
        guard let upstream = configuration.upstreams[name] else {
            throw UsageError(message: "--upstream: unknown '\(name)'")
        }
        var credentials = upstream.credentials.signing
        if case .r2Temporary(let config)? = upstream.refreshingCredentials {
            // Minted locally, so the command signs with a fresh key and its session token, as the daemon would.
            switch config.mint(now: AmzDate.now().epochSeconds) {
            case .success(let minted): credentials = minted
            case .failure(let error):
                throw UsageError(message: "upstream '\(name)': cannot mint its R2 temporary credentials: \(error)")
            }
        } else if let process = upstream.refreshingCredentials {
            throw UsageError(
                message: "upstream '\(name)' gets its keys from \(process) when the daemon runs; pass the keys "
                    + "explicitly (--access-key-id, --secret-access-key, --session-token) instead of --config")
        }
        if let bucket, let found = configuration.buckets.first(where: { $0.name == bucket }), found.upstream != name {
            throw UsageError(
                message: "--upstream: bucket '\(bucket)' is served by upstream '\(found.upstream)', not '\(name)'")
        }
        return SigningTarget(
            credentials: credentials, region: upstream.region, service: options.value("service") ?? "s3",
            endpoint: try RequestURL(upstream.endpoint.description), configuration: configuration, upstreamName: name)
    }

    private static func onlyMatch(_ names: [String]) -> String? { names.count == 1 ? names[0] : nil }

    /// Prints every configuration error (`file:line:col: error: …`); the caller exits 78.
    static func report(_ failure: ConfigFailure, command: String) {
        for error in failure.errors.errors { Console.err(error.description) }
        Console.err("presignd \(command): configuration errors; nothing signed")
    }
}

/// An `http(s)://host[:port]/path?query` URL split into raw parts; the fragment is dropped (§3: never sent).
struct RequestURL {
    var scheme: String
    /// Lower-case host, `:port` only when not the scheme's default; IPv6 keeps its brackets (§4.2).
    var hostHeader: String
    var rawPath: String
    var rawQuery: String

    init(_ text: String) throws(UsageError) {
        if ASCII.equalsLowercase(text.utf8.prefix(8), "https://") {
            scheme = "https"
        } else if ASCII.equalsLowercase(text.utf8.prefix(7), "http://") {
            scheme = "http"
        } else {
            throw UsageError(message: "URL must start with http:// or https://, got '\(text)'")
        }
        var rest = Substring(text.dropFirst(scheme.count + 3))
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = ASCII.lowercased(String(rest[..<authorityEnd]))
        let target = rest[authorityEnd...]
        guard !authority.isEmpty, !authority.contains("@") else {
            throw UsageError(message: "URL needs a host (and no user info): '\(text)'")
        }
        var host = authority
        var port: String? = nil
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = String(authority[..<colon])
            port = String(authority[authority.index(after: colon)...])
        }
        if let port, port.isEmpty || !port.allSatisfy(\.isASCII) || Int(port) == nil {
            throw UsageError(message: "bad port in URL '\(text)'")
        }
        let isDefault = port == nil || (scheme == "https" && port == "443") || (scheme == "http" && port == "80")
        hostHeader = isDefault ? host : host + ":" + (port ?? "")
        if let question = target.firstIndex(of: "?") {
            rawPath = String(target[..<question])
            rawQuery = String(target[target.index(after: question)...])
        } else {
            rawPath = String(target)
            rawQuery = ""
        }
    }
}

/// A tiny JSON writer: strings escaped per RFC 8259 (`"`, `\\`, control characters).
enum JSONText {
    enum Value {
        case string(String)
        case int(Int)
        case pairs([(name: String, value: String)])
        case object([(String, String)])
    }

    static func object(_ members: [(String, Value)]) -> String {
        "{" + members.map { quote($0.0) + ": " + render($0.1) }.joined(separator: ", ") + "}"
    }

    static func render(_ value: Value) -> String {
        switch value {
        case .string(let text): quote(text)
        case .int(let number): String(number)
        case .pairs(let pairs):
            "[" + pairs.map { "[" + quote($0.name) + ", " + quote($0.value) + "]" }.joined(separator: ", ") + "]"
        case .object(let members): "{" + members.map { quote($0.0) + ": " + quote($0.1) }.joined(separator: ", ") + "}"
        }
    }

    static func quote(_ text: String) -> String {
        PresigndProxy.JSONText.quoted(text)
    }
}
