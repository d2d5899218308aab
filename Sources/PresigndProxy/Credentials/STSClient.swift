import PresigndConfig
import PresigndPolicy
import PresigndSigV4

/// One call to AWS STS's query API (`POST /` with a form body, version 2011-06-15), signed with presignd's own
/// signer when keys are given (`AssumeRole`) and unsigned otherwise (`AssumeRoleWithWebIdentity`), and its XML
/// answer read.
enum STSClient {
    static let version = "2011-06-15"
    /// STS is a remote service, unlike the metadata endpoints: the SDKs wait longer for it.
    static let timeoutMilliseconds = 10_000
    static let contentType = "application/x-www-form-urlencoded; charset=utf-8"

    /// The request to send: its headers (without `Host`, which the HTTP client adds with the same value that was
    /// signed) and form body.
    struct PreparedRequest {
        var headers: [(String, String)]
        var body: [UInt8]
    }

    /// `Action`, `Version` and `parameters`, form-encoded (RFC 3986 unreserved characters kept), and with
    /// `credentials` the SigV4 headers for service `sts` in the endpoint's region at `date`.
    static func prepare(
        action: String, parameters: [(String, String)], sts: STSEndpoint, credentials: Credentials?, date: AmzDate
    ) -> Result<PreparedRequest, CredentialFetchError> {
        let pairs = [("Action", action), ("Version", version)] + parameters
        let body = Array(
            pairs.map {
                URIEncoding.encode(Array($0.0.utf8), keepingSlash: false) + "="
                    + URIEncoding.encode(Array($0.1.utf8), keepingSlash: false)
            }.joined(separator: "&").utf8)
        var headers = [("Content-Type", contentType)]
        guard let credentials else { return .success(PreparedRequest(headers: headers, body: body)) }
        let host = MetadataHTTPClient.hostHeader(
            host: sts.endpoint.host, port: sts.endpoint.port, usesTLS: sts.endpoint.scheme == .https)
        do throws(SigV4Error) {
            let signer = try Signer(credentials: credentials, region: sts.region, service: "sts")
            let request = SignableRequest(
                method: "POST", path: "/", headers: [("Host", host), ("Content-Type", contentType)])
            // Every header given is signed; no x-amz-content-sha256 (an S3 header): STS hashes the body itself.
            let signed = try signer.sign(
                request, payload: .sha256(hex: try sha256Hex(body)), date: date, selection: .all,
                addsContentSHA256Header: false)
            headers = signed.headers.filter { $0.name.lowercased() != "host" }.map { ($0.name, $0.value) }
        } catch {
            return .failure(CredentialFetchError("cannot sign the STS request: \(error)"))
        }
        return .success(PreparedRequest(headers: headers, body: body))
    }

    /// Sends a prepared request and reads the credentials from the answer to `action`.
    static func call(
        action: String, parameters: [(String, String)], sts: STSEndpoint, credentials: Credentials?
    ) -> Result<FetchedCredentials, CredentialFetchError> {
        let prepared: PreparedRequest
        switch prepare(action: action, parameters: parameters, sts: sts, credentials: credentials, date: .now()) {
        case .failure(let error): return .failure(error)
        case .success(let request): prepared = request
        }
        var tls: TLSClientContext?
        if sts.endpoint.scheme == .https {
            do {
                tls = try TLSClientContext(caFile: sts.caFile, verifiesPeer: true)
            } catch {
                return .failure(CredentialFetchError("STS \(sts.endpoint): \(error)"))
            }
        }
        let response = MetadataHTTPClient.request(
            method: "POST", host: sts.endpoint.host, port: sts.endpoint.port, path: "/", headers: prepared.headers,
            body: prepared.body, tls: tls, timeoutMilliseconds: timeoutMilliseconds)
        switch response {
        case .failure(let error):
            return .failure(CredentialFetchError("STS \(sts.endpoint): \(error.message)"))
        case .success(let answer) where answer.status != 200:
            return .failure(
                CredentialFetchError(
                    "STS \(action) answered HTTP \(answer.status)" + (errorSummary(answer.body).map { ": \($0)" } ?? "")
                ))
        case .success(let answer):
            return Self.credentials(fromXML: answer.body, action: action)
        }
    }

    /// `<ActionResponse><ActionResult><Credentials>` with `AccessKeyId`, `SecretAccessKey`, `SessionToken` and
    /// `Expiration`; errors name the element, never a value.
    static func credentials(fromXML body: [UInt8], action: String) -> Result<FetchedCredentials, CredentialFetchError> {
        let prefix = [action + "Response", action + "Result", "Credentials"]
        do throws(XMLSyntaxError) {
            let tokens = try XMLScanner.tokens(body)
            func field(_ name: String) throws(XMLSyntaxError) -> String {
                let found = try XMLScanner.texts(tokens, at: prefix + [name])
                guard found.count == 1, let value = found.first, !value.isEmpty else {
                    throw XMLSyntaxError("no single \(prefix.joined(separator: "/"))/\(name)")
                }
                return value
            }
            let keyID = try field("AccessKeyId")
            let secret = try field("SecretAccessKey")
            let token = try field("SessionToken")
            let expiration = try field("Expiration")
            guard let expiry = AmzDate(iso8601: expiration) else {
                throw XMLSyntaxError("Expiration is not an ISO 8601 time")
            }
            return .success(
                FetchedCredentials(
                    credentials: Credentials(
                        accessKeyID: keyID, secretAccessKey: Secret(secret), sessionToken: Secret(token)),
                    expiresAtMilliseconds: expiry.epochSeconds * 1000))
        } catch {
            return .failure(CredentialFetchError("the STS \(action) answer is not readable: \(error.detail)"))
        }
    }

    /// `Code: Message` from an STS `<ErrorResponse><Error>`, when there is one.
    static func errorSummary(_ body: [UInt8]) -> String? {
        guard let tokens = try? XMLScanner.tokens(body),
            let code = (try? XMLScanner.texts(tokens, at: ["ErrorResponse", "Error", "Code"]))?.first
        else { return nil }
        let message = (try? XMLScanner.texts(tokens, at: ["ErrorResponse", "Error", "Message"]))?.first
        return code + (message.map { ": " + String($0.prefix(300)) } ?? "")
    }
}
