import PresigndSigV4

/// `presignd sign`: signs one request and prints every SigV4 stage (a signature doctor).
///
/// Also holds the pieces `presign` shares: `SigningTarget` resolution, URL splitting and JSON output
/// (this file and PresignCommand.swift are the CLI's SigV4 edge).
enum SignCommand {
    static let usage = """
        Usage: presignd sign --url URL [--method M] [--header 'Name: value']... [--payload P] [--date D] [--json]
                             [--region R] [--service S] [--access-key-id ID] [--secret-access-key KEY] [--session-token T]

        Signs a request with AWS SigV4 (S3 rules) and prints the wire URL, canonical request, string to sign,
        signature and Authorization header.

          --url URL          http(s)://host[:port]/path?query; the path is decoded once and encoded again
          --method M         HTTP method (default GET)
          --header 'N: v'    a header to send (repeatable); Host comes from the URL
          --payload P        UNSIGNED-PAYLOAD (default), empty, or a 64-digit hex SHA-256 of the body
          --date D           signing time as 20260301T000000Z (default: now)
          --region R         default $AWS_REGION, else us-east-1
          --service S        default s3
          --access-key-id, --secret-access-key, --session-token
                             default $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN
          --json             print one JSON object (wire_url, canonical_request, string_to_sign, signature,
                             authorization, signed_headers, headers)
        """

    static let credentialOptions: Set<String> = [
        "region", "service", "access-key-id", "secret-access-key", "session-token", "config", "upstream",
    ]

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let options = PresigndCommand.parse(
                arguments, usage: usage, valued: credentialOptions.union(["method", "url", "header", "payload", "date"]),
                flags: ["json"], exitCode: &exitCode)
        else { return exitCode }
        do {
            return try run(options)
        } catch let error as UsageError {
            Console.err("presignd sign: \(error.message)\n\n\(usage)")
            return ExitCode.usage
        } catch {
            Console.err("presignd sign: \(error)")
            return ExitCode.software
        }
    }

    static func run(_ options: Arguments) throws -> Int32 {
        guard options.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(options.positionals[0])'") }
        let target = try resolveSigningTarget(options, environment: processEnvironment())
        guard let urlText = options.value("url") else { throw UsageError(message: "--url is required") }
        let url = try RequestURL(urlText)
        let method = (options.value("method") ?? "GET").uppercased()
        let payload = try parsePayload(options.value("payload") ?? "UNSIGNED-PAYLOAD")
        let date = try parseDate(options.value("date"))
        var headers: [(name: String, value: String)] = [("Host", url.hostHeader)]
        for text in options.values("header") {
            let header = try parseHeader(text)
            if header.name.lowercased() != "host" { headers.append(header) }
        }
        let path: String
        let query: [QueryParameter]
        do {
            path = try URIEncoding.canonicalPath(rawPath: Array(url.rawPath.utf8))
            query = try URIEncoding.parseQuery(rawQuery: Array(url.rawQuery.utf8))
                .filter { !PresignParameters.isPresignParameter(name: $0.name) }
        } catch {
            throw UsageError(message: "bad --url: \(describe(error))")
        }
        let signer = try Signer(credentials: target.credentials, region: target.region, service: target.service)
        let signed = try signer.sign(SignableRequest(method: method, path: path, query: query, headers: headers), payload: payload, date: date)
        let wireURL = url.scheme + "://" + url.hostHeader + signed.target
        if options.has("json") {
            Console.out(JSONText.object([
                ("wire_url", .string(wireURL)), ("method", .string(method)),
                ("canonical_request", .string(signed.canonicalRequest)), ("string_to_sign", .string(signed.stringToSign)),
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
}

/// Credentials, region, service and (for `presign s3://…`) the endpoint a request is signed for.
struct SigningTarget {
    var credentials: Credentials
    var region: String
    var service: String
    var endpoint: RequestURL?
}

extension SignCommand {
    /// The one place credentials, region and endpoint are resolved: flags first, then `AWS_*` variables.
    /// `--config PATH --upstream NAME` will resolve them from the configuration file.
    static func resolveSigningTarget(_ options: Arguments, environment: [String: String]) throws(UsageError)
        -> SigningTarget
    {
        if options.value("config") != nil || options.value("upstream") != nil {
            throw UsageError(message: "--config/--upstream are not yet supported; pass --endpoint, --region and credentials (or AWS_* variables)")
        }
        func pick(_ option: String, _ variable: String) -> String? {
            if let value = options.value(option), !value.isEmpty { return value }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }
        guard let accessKeyID = pick("access-key-id", "AWS_ACCESS_KEY_ID") else {
            throw UsageError(message: "no access key: pass --access-key-id or set AWS_ACCESS_KEY_ID")
        }
        guard let secret = pick("secret-access-key", "AWS_SECRET_ACCESS_KEY") else {
            throw UsageError(message: "no secret key: pass --secret-access-key or set AWS_SECRET_ACCESS_KEY")
        }
        let token = pick("session-token", "AWS_SESSION_TOKEN")
        let region = pick("region", "AWS_REGION") ?? "us-east-1"
        let endpoint = try options.value("endpoint").map { (text) throws(UsageError) in try RequestURL(text) }
        return SigningTarget(
            credentials: Credentials(accessKeyID: accessKeyID, secretAccessKey: Secret(secret), sessionToken: token.map(Secret.init)),
            region: region, service: options.value("service") ?? "s3", endpoint: endpoint)
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
        let lower = text.lowercased()
        if lower.hasPrefix("https://") {
            scheme = "https"
        } else if lower.hasPrefix("http://") {
            scheme = "http"
        } else {
            throw UsageError(message: "URL must start with http:// or https://, got '\(text)'")
        }
        var rest = Substring(text.dropFirst(scheme.count + 3))
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd].lowercased()
        let target = rest[authorityEnd...]
        guard !authority.isEmpty, !authority.contains("@") else { throw UsageError(message: "URL needs a host (and no user info): '\(text)'") }
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
        case .pairs(let pairs): "[" + pairs.map { "[" + quote($0.name) + ", " + quote($0.value) + "]" }.joined(separator: ", ") + "]"
        case .object(let members): "{" + members.map { quote($0.0) + ": " + quote($0.1) }.joined(separator: ", ") + "}"
        }
    }

    static func quote(_ text: String) -> String {
        let hex = Array("0123456789abcdef")
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                output += "\\u00" + String(hex[Int(scalar.value >> 4)]) + String(hex[Int(scalar.value & 0xF)])
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}
