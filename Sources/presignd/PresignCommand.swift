import PresigndSigV4

/// `presignd presign`: mints a presigned URL (SIGV4-S3-RULES §7).
enum PresignCommand {
    static let usage = """
        Usage: presignd presign (s3://BUCKET/KEY --endpoint URL | --url URL) [--method GET|HEAD|PUT|DELETE]
                                [--expires 1h] [--date D] [--region R] [--content-type T]
                                [--response-content-disposition V] [--response-content-type V] [--json]

        Prints a presigned URL (UNSIGNED-PAYLOAD, signed headers: host, plus content-type when given).

          s3://BUCKET/KEY    the key is literal (not percent-encoded); needs --endpoint, giving the
                             path-style URL ENDPOINT/BUCKET/KEY
          --url URL          a full http(s) URL; its path is decoded once and encoded again
          --method M         GET (default), HEAD, PUT or DELETE
          --expires E        seconds, or 30s / 15m / 1h / 7d; 1 second to 7 days (default 1h)
          --date D           signing time as 20260301T000000Z (default: now)
          --content-type T   pin the Content-Type the user must send (PUT)
          --response-content-disposition V, --response-content-type V
                             response header overrides (signed query parameters)
          --region, --service, --access-key-id, --secret-access-key, --session-token: as for 'sign'
          --json             print one JSON object: url, method, expires_at, headers
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        let valued = SignCommand.credentialOptions.union([
            "url", "method", "expires", "date", "endpoint", "content-type", "response-content-disposition",
            "response-content-type",
        ])
        guard let options = PresigndCommand.parse(arguments, usage: usage, valued: valued, flags: ["json"], exitCode: &exitCode)
        else { return exitCode }
        do {
            return try run(options)
        } catch let error as UsageError {
            Console.err("presignd presign: \(error.message)\n\n\(usage)")
            return ExitCode.usage
        } catch {
            Console.err("presignd presign: \(error)")
            return ExitCode.software
        }
    }

    static func run(_ options: Arguments) throws -> Int32 {
        let target = try SignCommand.resolveSigningTarget(options, environment: processEnvironment())
        let method = (options.value("method") ?? "GET").uppercased()
        guard ["GET", "HEAD", "PUT", "DELETE"].contains(method) else {
            throw UsageError(message: "--method must be GET, HEAD, PUT or DELETE (R2 has no presigned POST), got '\(method)'")
        }
        let expires = try parseExpires(options.value("expires") ?? "3600")
        let date = try SignCommand.parseDate(options.value("date"))
        let (url, path, query) = try location(options, endpoint: target.endpoint)
        var parameters = query
        for name in ["response-content-disposition", "response-content-type"] {
            if let value = options.value(name) { parameters.append(QueryParameter(name: name, value: value)) }
        }
        var headers: [(name: String, value: String)] = []
        if let contentType = options.value("content-type") { headers.append(("Content-Type", contentType)) }
        let signer = try Signer(credentials: target.credentials, region: target.region, service: target.service)
        let presigned: PresignedURL
        do {
            presigned = try signer.presign(
                method: method, host: url.hostHeader, path: path, query: parameters, headers: headers, expires: expires,
                date: date, scheme: url.scheme)
        } catch {
            throw usageOrFailure(error)
        }
        let expiresAt = AmzDate(epochSeconds: presigned.expiresAt).iso8601
        if options.has("json") {
            Console.out(JSONText.object([
                ("url", .string(presigned.url)), ("method", .string(method)), ("expires_at", .string(expiresAt)),
                ("headers", .object(presigned.signedHeaders.map { ($0.name, $0.value) })),
            ]))
        } else {
            var lines = [presigned.url]
            if !presigned.signedHeaders.isEmpty {
                lines.append("# send with: " + presigned.signedHeaders.map { "\($0.name): \($0.value)" }.joined(separator: ", "))
            }
            lines.append("# \(method), expires \(expiresAt)")
            Console.out(lines.joined(separator: "\n"))
        }
        return ExitCode.ok
    }

    /// The URL parts, canonical path and query for `s3://BUCKET/KEY` (with `--endpoint`) or `--url`.
    static func location(_ options: Arguments, endpoint: RequestURL?) throws -> (RequestURL, String, [QueryParameter]) {
        let positionals = options.positionals
        if let urlText = options.value("url") {
            guard positionals.isEmpty else { throw UsageError(message: "give either s3://BUCKET/KEY or --url, not both") }
            let url = try RequestURL(urlText)
            do {
                let path = try URIEncoding.canonicalPath(rawPath: Array(url.rawPath.utf8))
                let query = try URIEncoding.parseQuery(rawQuery: Array(url.rawQuery.utf8))
                    .filter { !PresignParameters.isPresignParameter(name: $0.name) }
                return (url, path, query)
            } catch {
                throw UsageError(message: "bad --url: \(SignCommand.describe(error))")
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
            throw UsageError(message: "s3://BUCKET/KEY needs --endpoint URL (until --config exists)")
        }
        // Path style: ENDPOINT/BUCKET/KEY; the key is literal bytes, encoded once keeping '/' (§2.1).
        var base = endpoint.rawPath
        while base.hasSuffix("/") { base.removeLast() }
        let literal = Array(location[..<slash].utf8) + [UInt8(ascii: "/")] + Array(location[location.index(after: slash)...].utf8)
        let encodedBase = try decodeBase(base)
        return (endpoint, encodedBase + "/" + URIEncoding.encode(literal, keepingSlash: true), [])
    }

    private static func decodeBase(_ base: String) throws(UsageError) -> String {
        guard !base.isEmpty else { return "" }
        do {
            return try URIEncoding.canonicalPath(rawPath: Array(base.utf8))
        } catch {
            throw UsageError(message: "bad --endpoint path: \(SignCommand.describe(error))")
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
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var digits = Substring(text)
        var multiplier = 1
        if let last = text.last, let unit = units[last] {
            multiplier = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
            throw UsageError(message: "--expires must be seconds or a number with s/m/h/d, got '\(text)'")
        }
        let (seconds, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow, (1...Signer.maximumExpiry).contains(seconds) else {
            throw UsageError(message: "--expires must be 1 to 604800 seconds (7 days), got '\(text)'")
        }
        return seconds
    }
}
