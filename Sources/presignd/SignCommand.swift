import PresigndHTTP1
import PresigndSigV4

/// `presignd sign`: signs one request and prints every SigV4 stage (a signature doctor).
///
/// Also holds the pieces `presign` shares: `SigningTarget` resolution, URL splitting and JSON output
/// (this file and PresignCommand.swift are the CLI's SigV4 edge).
enum SignCommand {
    static let usage = """
        Usage: presignd sign --url URL [--method M] [--header 'Name: value']... [--payload P] [--date D] [--json]
                             [--config PATH [--upstream NAME]]
                             [--region R] [--service S] [--access-key-id ID] [--secret-access-key KEY] [--session-token T]

        Signs a request with AWS SigV4 (S3 rules) and prints the wire URL, canonical request, string to sign,
        signature and Authorization header.

          --url URL          http(s)://host[:port]/path?query; the path is decoded once and encoded again.
                             With --config, a bare /path?query is taken relative to the upstream's endpoint
          --method M         HTTP method (default GET)
          --header 'N: v'    a header to send (repeatable); Host comes from the URL
          --payload P        UNSIGNED-PAYLOAD (default), empty, or a 64-digit hex SHA-256 of the body
          --date D           signing time as 20260301T000000Z (default: now)
          --region R         default $AWS_REGION, else us-east-1
          --service S        default s3
          --access-key-id, --secret-access-key, --session-token
                             default $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN
          --config PATH      take credentials, region and endpoint from this configuration file instead
          --upstream NAME    which [upstream.NAME]; needed only when the file has several and the URL's host
                             matches none (or several) of their endpoints
          --json             print one JSON object (wire_url, canonical_request, string_to_sign, signature,
                             authorization, signed_headers, headers)

        Exit status: 0 signed, 64 usage error, 78 configuration error.
        """

    static let credentialOptions: Set<String> = [
        "region", "service", "access-key-id", "secret-access-key", "session-token", "config", "upstream",
    ]

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let options = PresigndCommand.parse(
                arguments, usage: usage,
                valued: credentialOptions.union(["method", "url", "header", "payload", "date"]),
                flags: ["json"], exitCode: &exitCode)
        else { return exitCode }
        do {
            return try run(options)
        } catch let error as UsageError {
            Console.err("presignd sign: \(error.message)\n\n\(usage)")
            return ExitCode.usage
        } catch let failure as ConfigFailure {
            SigningTargets.report(failure, command: "sign")
            return ExitCode.config
        } catch {
            Console.err("presignd sign: \(error)")
            return ExitCode.software
        }
    }

    static func run(_ options: Arguments) throws -> Int32 {
        guard options.positionals.isEmpty else {
            throw UsageError(message: "unexpected argument '\(options.positionals[0])'")
        }
        guard let urlText = options.value("url") else { throw UsageError(message: "--url is required") }
        let isRelative = urlText.hasPrefix("/")
        if isRelative && options.value("config") == nil {
            throw UsageError(message: "--url /path needs --config (to know the endpoint); give a full http(s) URL")
        }
        let given = isRelative ? nil : try RequestURL(urlText)
        let target = try SigningTargets.resolve(options, environment: processEnvironment(), host: given?.hostHeader)
        let url: RequestURL
        if let given {
            url = given
        } else {
            guard let endpoint = target.endpoint else { throw UsageError(message: "no endpoint for --url \(urlText)") }
            url = try RequestURL(endpoint.scheme + "://" + endpoint.hostHeader + urlText)
        }
        let method = ASCII.uppercased(options.value("method") ?? "GET")
        let payload = try parsePayload(options.value("payload") ?? "UNSIGNED-PAYLOAD")
        let date = try SigningTargets.parseDate(options.value("date"))
        var headers: [(name: String, value: String)] = [("Host", url.hostHeader)]
        for text in options.values("header") {
            let header = try parseHeader(text)
            if !ASCII.equalsLowercase(header.name, "host") { headers.append(header) }
        }
        let path: String
        let query: [QueryParameter]
        do {
            path = try URIEncoding.canonicalPath(rawPath: Array(url.rawPath.utf8))
            query = try URIEncoding.parseQuery(rawQuery: Array(url.rawQuery.utf8))
                .filter { !PresignParameters.isPresignParameter(name: $0.name) }
        } catch {
            throw UsageError(message: "bad --url: \(SigningTargets.describe(error))")
        }
        let signer = try Signer(credentials: target.credentials, region: target.region, service: target.service)
        let signed = try signer.sign(
            SignableRequest(method: method, path: path, query: query, headers: headers), payload: payload, date: date)
        let wireURL = url.scheme + "://" + url.hostHeader + signed.target
        if options.has("json") {
            Console.out(
                JSONText.object([
                    ("wire_url", .string(wireURL)), ("method", .string(method)),
                    ("canonical_request", .string(signed.canonicalRequest)),
                    ("string_to_sign", .string(signed.stringToSign)),
                    ("signature", .string(signed.signature)), ("authorization", .string(signed.authorization)),
                    ("signed_headers", .string(signed.signedHeaders)), ("headers", .pairs(signed.headers)),
                ]))
        } else {
            var lines = ["Wire request:", "  \(method) \(wireURL)", "", "Headers to send:"]
            lines += signed.headers.map { "  \($0.name): \($0.value)" }
            lines += ["", "Canonical request:", signed.canonicalRequest, "", "String to sign:", signed.stringToSign]
            lines += ["", "Signed headers:", "  \(signed.signedHeaders)", "", "Signature:", "  \(signed.signature)"]
            lines += ["", "Authorization:", "  \(signed.authorization)"]
            Console.out(lines.joined(separator: "\n"))
        }
        return ExitCode.ok
    }

    static func parseHeader(_ text: String) throws(UsageError) -> (name: String, value: String) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw UsageError(message: "--header needs 'Name: value', got '\(text)'")
        }
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let value = text[text.index(after: colon)...].drop(while: isBlank)
        let trimmedValue = value.reversed().drop(while: isBlank).reversed()
        return (String(text[..<colon]), String(trimmedValue))
    }

    static func parsePayload(_ text: String) throws(UsageError) -> PayloadHash {
        if text == "empty" { return .emptyBody }
        guard let payload = PayloadHash(clientValue: text) else {
            throw UsageError(message: "--payload must be UNSIGNED-PAYLOAD, empty, or 64 hex digits")
        }
        return payload
    }
}
