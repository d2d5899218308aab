import PresigndConfig
import PresigndHTTP1
import PresigndProxy
import PresigndSigV4

#if canImport(Glibc)
    import Glibc
#endif

/// `presignd presign`: mints a presigned URL (SIGV4-S3-RULES §7). With `--config` it applies the same bucket
/// policy as the presign API (`PresignService`).
enum PresignCommand {
    static let usage = """
        Usage: presignd presign s3://BUCKET/KEY --config PATH [--upstream NAME] [options]
               presignd presign (s3://BUCKET/KEY --endpoint URL | --url URL) [credentials] [options]

        Prints a presigned URL (UNSIGNED-PAYLOAD; signed headers: host, plus any pinned header).

          s3://BUCKET/KEY    the key is literal (not percent-encoded). With --config the bucket is looked up in
                             the file (its upstream, and its policy: access, allowed_methods, allowed_prefixes,
                             max_presign_expiry, max_upload_size); without, --endpoint gives ENDPOINT/BUCKET/KEY
          --url URL          a full http(s) URL; its path is decoded once and encoded again (with --config:
                             a path /BUCKET/KEY on the upstream's endpoint, checked like s3://)
          --config PATH      credentials, region, endpoint and policy from this configuration file
          --upstream NAME    the bucket's [upstream.NAME]; only needed to disambiguate --url
          --method M         GET (default), HEAD, PUT or DELETE
          --expires E        seconds, or 30s / 15m / 1h / 7d; 1 second to 7 days, and with --config at most the
                             bucket's max_presign_expiry (default 1h, or that maximum when shorter)
          --date D           signing time as 20260301T000000Z (default: now; with --config, on the upstream's
                             clock as the daemon running that configuration measured it)
          --content-type T   PUT: pin the Content-Type the uploader must send
          --content-length N PUT: pin the exact Content-Length the uploader must send
          --response-content-disposition V, --response-content-type V, --response-cache-control V,
          --response-content-language V, --response-content-encoding V, --response-expires V
                             GET/HEAD: response header overrides (signed query parameters)
          --version-id V     GET/HEAD/DELETE: a specific object version
          --region, --service, --access-key-id, --secret-access-key, --session-token: as for 'sign'
          --json             print one JSON object: url, method, expires_at, expires_in, headers

        Exit status: 0 signed, 64 usage error or policy refusal (the message names the field), 78 configuration
        error.
        """

    static let overrideOptions = PresignService.responseOverrideNames

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        let valued = SignCommand.credentialOptions.union([
            "url", "method", "expires", "date", "endpoint", "content-type", "content-length", "version-id",
        ]).union(overrideOptions)
        guard
            let options = PresigndCommand.parse(
                arguments, usage: usage, valued: valued, flags: ["json"], exitCode: &exitCode)
        else { return exitCode }
        do {
            return try run(options)
        } catch let error as UsageError {
            Console.err("presignd presign: \(error.message)\n\n\(usage)")
            return ExitCode.usage
        } catch let failure as PresignFailure {
            Console.err("presignd presign: refused: \(optionName(failure.field)): \(failure.message)")
            return ExitCode.usage
        } catch let failure as ConfigFailure {
            SigningTargets.report(failure, command: "presign")
            return ExitCode.config
        } catch {
            Console.err("presignd presign: \(error)")
            return ExitCode.software
        }
    }

    static func run(_ options: Arguments) throws -> Int32 {
        let method = ASCII.uppercased(options.value("method") ?? "GET")
        guard ["GET", "HEAD", "PUT", "DELETE"].contains(method) else {
            throw UsageError(
                message: "--method must be GET, HEAD, PUT or DELETE (R2 has no presigned POST), got '\(method)'")
        }
        let expires = try options.value("expires").map { (text) throws(UsageError) in try parseExpires(text) }
        let date = try SigningTargets.parseDate(options.value("date"))
        let contentLength = try options.value("content-length").map { (text) throws(UsageError) -> Int in
            guard let value = Int(text), value >= 0, text.allSatisfy(\.isASCII) else {
                throw UsageError(message: "--content-length must be a number of bytes, got '\(text)'")
            }
            return value
        }
        let link: PresignedLink
        if options.value("config") != nil {
            link = try presignWithConfig(
                options, method: method, expires: expires, contentLength: contentLength, date: date)
        } else {
            link = try presignWithFlags(
                options, method: method, expires: expires ?? 3600, contentLength: contentLength, date: date)
        }
        if options.has("json") {
            Console.out(link.json)
        } else {
            var lines = [link.url]
            if !link.headers.isEmpty {
                lines.append("# send with: " + link.headers.map { "\($0.name): \($0.value)" }.joined(separator: ", "))
            }
            lines.append("# \(method), expires \(link.expiresAtISO8601)")
            Console.out(lines.joined(separator: "\n"))
        }
        return ExitCode.ok
    }

    /// `--config`: the bucket from the file and `PresignService`'s policy, exactly as the API applies it.
    static func presignWithConfig(
        _ options: Arguments, method: String, expires: Int?, contentLength: Int?, date: AmzDate
    ) throws -> PresignedLink {
        let (bucket, key, urlQuery, host) = try configLocation(options)
        let target = try SigningTargets.resolve(options, environment: processEnvironment(), bucket: bucket, host: host)
        guard let configuration = target.configuration else { throw UsageError(message: "--config did not load") }
        if let host, let endpoint = target.endpoint, endpoint.hostHeader != host {
            throw UsageError(
                message: "--url host '\(host)' is not the endpoint of upstream '\(target.upstreamName ?? "")'")
        }
        var request = PresignRequest(bucket: bucket, key: key, method: method)
        request.expires = expires
        request.contentType = options.value("content-type")
        request.contentLength = contentLength
        request.versionID = options.value("version-id")
        for parameter in urlQuery {
            if PresignService.responseOverrideNames.contains(parameter.name) {
                request.responseOverrides.append((parameter.name, parameter.value))
            } else if parameter.name == "versionId" {
                request.versionID = parameter.value
            } else {
                throw UsageError(message: "--url query parameter '\(parameter.name)' is not supported with --config")
            }
        }
        for name in overrideOptions {
            if let value = options.value(name) { request.responseOverrides.append((name, value)) }
        }
        let service = try PresignService(configuration: configuration)
        // The command line runs as a local user: judged as that user would be on a unix socket.
        let principal = Principal(peer: .unix(uid: getuid(), gid: getgid(), pid: getpid()))
        var signingDate = date
        if options.value("date") == nil, let upstream = target.upstreamName,
            let offset = runningDaemonClockOffset(configuration, upstream: upstream), offset != 0
        {
            // The running daemon found the upstream's clock elsewhere (issue 21 §4): sign at the upstream's time.
            signingDate = AmzDate(epochSeconds: date.epochSeconds + offset)
        }
        // r2_temporary keys are minted here, on the clock the link is signed on (the token's iat and exp with it).
        if case .failure(let error) = service.mintLocalCredentials(configuration, now: signingDate.epochSeconds) {
            throw UsageError(message: "cannot mint the upstream's R2 temporary credentials: \(error)")
        }
        return try service.presign(request, date: signingDate, principal: principal).get()
    }

    /// The clock offset the daemon running this configuration measured for `upstream`, asked of its admin
    /// listener (TCP only; a wildcard address is asked on loopback). Nil when none answers.
    static func runningDaemonClockOffset(_ configuration: Configuration, upstream: String) -> Int? {
        guard case .tcp(let host, let port)? = configuration.server.adminListen, port != 0 else { return nil }
        let address = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        return AdminClient.clockOffset(host: address, port: port, upstream: upstream)
    }

    /// Bucket, literal key, the URL's own query and (for `--url`) its host, for `--config`.
    static func configLocation(_ options: Arguments) throws(UsageError)
        -> (String, String, [QueryParameter], String?)
    {
        if let urlText = options.value("url") {
            guard options.positionals.isEmpty else {
                throw UsageError(message: "give either s3://BUCKET/KEY or --url, not both")
            }
            let url = try RequestURL(urlText)
            do {
                let decoded = try URIEncoding.decodePath(Array(url.rawPath.utf8), plusIsSpace: false)
                let text = String(decoding: decoded, as: UTF8.self)
                let query = try URIEncoding.parseQuery(rawQuery: Array(url.rawQuery.utf8))
                    .filter { !PresignParameters.isPresignParameter(name: $0.name) }
                let (bucket, key) = try split(text.hasPrefix("/") ? String(text.dropFirst()) : text, shown: urlText)
                return (bucket, key, query, url.hostHeader)
            } catch let error as UsageError {
                throw error
            } catch {
                throw UsageError(message: "bad --url: \(error)")
            }
        }
        guard options.positionals.count == 1, options.positionals[0].hasPrefix("s3://") else {
            throw UsageError(message: "give s3://BUCKET/KEY or --url URL")
        }
        let (bucket, key) = try split(
            String(options.positionals[0].dropFirst("s3://".count)), shown: options.positionals[0])
        return (bucket, key, [], nil)
    }

    private static func split(_ location: String, shown: String) throws(UsageError) -> (String, String) {
        guard let slash = location.firstIndex(of: "/"), slash != location.startIndex,
            location.index(after: slash) != location.endIndex
        else {
            throw UsageError(message: "location needs a bucket and a key: '\(shown)'")
        }
        return (String(location[..<slash]), String(location[location.index(after: slash)...]))
    }

    /// Flags or `AWS_*` credentials: no bucket policy, only the signer's own checks.
    static func presignWithFlags(
        _ options: Arguments, method: String, expires: Int, contentLength: Int?, date: AmzDate
    ) throws -> PresignedLink {
        let target = try SigningTargets.resolve(options, environment: processEnvironment())
        let (url, path, query) = try location(options, endpoint: target.endpoint)
        var parameters = query
        for name in overrideOptions {
            if let value = options.value(name) { parameters.append(QueryParameter(name: name, value: value)) }
        }
        if let version = options.value("version-id") {
            parameters.append(QueryParameter(name: "versionId", value: version))
        }
        var headers: [(name: String, value: String)] = []
        if let contentType = options.value("content-type") { headers.append(("Content-Type", contentType)) }
        if let contentLength { headers.append(("Content-Length", String(contentLength))) }
        let signer = try Signer(credentials: target.credentials, region: target.region, service: target.service)
        let presigned: PresignedURL
        do {
            presigned = try signer.presign(
                method: method, host: url.hostHeader, path: path, query: parameters, headers: headers, expires: expires,
                date: date, scheme: url.scheme)
        } catch {
            throw usageOrFailure(error)
        }
        return PresignedLink(
            url: presigned.url, method: method, bucket: "", expiresAt: presigned.expiresAt, expiresIn: expires,
            headers: presigned.signedHeaders)
    }

    /// The URL parts, canonical path and query for `s3://BUCKET/KEY` (with `--endpoint`) or `--url`.
    static func location(_ options: Arguments, endpoint: RequestURL?) throws -> (RequestURL, String, [QueryParameter]) {
        let positionals = options.positionals
        if let urlText = options.value("url") {
            guard positionals.isEmpty else {
                throw UsageError(message: "give either s3://BUCKET/KEY or --url, not both")
            }
            let url = try RequestURL(urlText)
            do {
                let path = try URIEncoding.canonicalPath(rawPath: Array(url.rawPath.utf8))
                let query = try URIEncoding.parseQuery(rawQuery: Array(url.rawQuery.utf8))
                    .filter { !PresignParameters.isPresignParameter(name: $0.name) }
                return (url, path, query)
            } catch {
                throw UsageError(message: "bad --url: \(SigningTargets.describe(error))")
            }
        }
        guard positionals.count == 1, positionals[0].hasPrefix("s3://") else {
            throw UsageError(message: "give s3://BUCKET/KEY or --url URL")
        }
        let location = positionals[0].dropFirst("s3://".count)
        guard let slash = location.firstIndex(of: "/"), slash != location.startIndex else {
            throw UsageError(message: "s3:// location needs a bucket and a key: '\(positionals[0])'")
        }
        guard let endpoint else {
            throw UsageError(message: "s3://BUCKET/KEY needs --config PATH or --endpoint URL")
        }
        // Path style: ENDPOINT/BUCKET/KEY; the key is literal bytes, encoded once keeping '/' (§2.1).
        var base = endpoint.rawPath
        while base.hasSuffix("/") { base.removeLast() }
        let literal =
            Array(location[..<slash].utf8) + [UInt8(ascii: "/")] + Array(location[location.index(after: slash)...].utf8)
        let encodedBase = try decodeBase(base)
        return (endpoint, encodedBase + "/" + URIEncoding.encode(literal, keepingSlash: true), [])
    }

    private static func decodeBase(_ base: String) throws(UsageError) -> String {
        guard !base.isEmpty else { return "" }
        do {
            return try URIEncoding.canonicalPath(rawPath: Array(base.utf8))
        } catch {
            throw UsageError(message: "bad --endpoint path: \(SigningTargets.describe(error))")
        }
    }

    /// The API field a policy refusal names, as the option a CLI user typed.
    static func optionName(_ field: String) -> String {
        switch field {
        case "bucket", "key", "": field.isEmpty ? "request" : field
        default: "--" + String(field.map { $0 == "_" ? "-" : $0 })
        }
    }

    /// An out-of-range expiry is a usage error (exit 64); anything else is a software failure.
    static func usageOrFailure(_ error: SigV4Error) -> any Error {
        if case .invalidExpiry(let seconds) = error {
            return UsageError(message: "--expires must be 1 to 604800 seconds (7 days), got \(seconds)")
        }
        return error
    }

    /// `3600`, `30s`, `15m`, `1h`, `7d` → seconds; checked against 1...604800 (§7).
    static func parseExpires(_ text: String) throws(UsageError) -> Int {
        try parseSeconds(text, option: "--expires", maximum: Signer.maximumExpiry)
    }

    /// `3600`, `30s`, `15m`, `1h`, `7d` → seconds, checked against 1...`maximum`.
    static func parseSeconds(_ text: String, option: String, maximum: Int) throws(UsageError) -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var multiplier = 1
        if let last = text.last, let unit = units[last] {
            multiplier = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
            throw UsageError(message: "\(option) must be seconds or a number with s/m/h/d, got '\(text)'")
        }
        let (seconds, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow, (1...maximum).contains(seconds) else {
            throw UsageError(
                message:
                    "\(option) must be 1 to \(maximum) seconds\(maximum == 604_800 ? " (7 days)" : ""), got '\(text)'")
        }
        return seconds
    }
}
