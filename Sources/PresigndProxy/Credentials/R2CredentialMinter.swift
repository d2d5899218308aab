import PresigndSigV4

/// Mints R2 temporary credentials locally, as Cloudflare documents "Generate locally (client-side signing)"
/// (developers.cloudflare.com/r2/api/s3/temporary-credentials/ and
/// /r2/examples/authenticate-r2-temp-credentials/). Pure: the time is a parameter.
///
/// 1. The JWT payload names the bucket and the scope (`bucket`, `scope`, optional `paths`), with `sub` the
///    account id, `iss` the parent access key id, `aud` the endpoint's host, `iat` and `exp`.
/// 2. It is signed with HS256 (header `{"alg":"HS256","typ":"JWT"}`) keyed by the parent secret access key.
/// 3. The temporary secret is the SHA-256 hex digest of the signed JWT; the session token is
///    `base64("jwt/" + JWT)`; the access key id is the parent's.
public struct R2CredentialMinter: Sendable {
    /// The parent R2 API token's keys.
    public var parent: Credentials
    /// The Cloudflare account id (`sub`).
    public var accountID: String
    /// The endpoint's host (`aud`: `new URL(endpoint).host`, with a port only when not the default).
    public var audience: String

    public init(parent: Credentials, accountID: String, audience: String) {
        self.parent = parent
        self.accountID = accountID
        self.audience = audience
    }

    /// The JWT's protected header, exactly as the documented example's `setProtectedHeader` writes it.
    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    /// The JWT payload, compact JSON in the documented example's member order (claims, then `sub`, `iss`, `aud`,
    /// `iat`, `exp` as its `SignJWT` calls add them).
    func payload(_ request: R2CredentialRequest, issuedAt: Int) -> String {
        func list(_ items: [String]) -> String { "[" + items.map(JSONText.quoted).joined(separator: ",") + "]" }
        var members = [
            #""bucket":"# + JSONText.quoted(request.bucket),
            #""scope":"# + JSONText.quoted(request.permission.rawValue),
        ]
        if !request.prefixes.isEmpty || !request.objects.isEmpty {
            members.append(
                #""paths":{"prefixPaths":"# + list(request.prefixes) + #","objectPaths":"# + list(request.objects)
                    + "}")
        }
        members += [
            #""sub":"# + JSONText.quoted(accountID),
            #""iss":"# + JSONText.quoted(parent.accessKeyID),
            #""aud":"# + JSONText.quoted(audience),
            #""iat":"# + String(issuedAt),
            #""exp":"# + String(issuedAt + request.ttlSeconds),
        ]
        return "{" + members.joined(separator: ",") + "}"
    }

    /// The signed JWT (RFC 7519 compact serialization, RFC 7515 §7.1).
    func signedJWT(_ request: R2CredentialRequest, issuedAt: Int) throws(SigV4Error) -> String {
        let signingInput =
            Base64.encodeURL(Self.header.utf8) + "." + Base64.encodeURL(payload(request, issuedAt: issuedAt).utf8)
        let signature = try hmacSHA256(key: parent.secretAccessKey.exposedValue.utf8, message: signingInput.utf8)
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// Derives the credential. Scope checks are the caller's (`R2CredentialPolicy`); this only refuses what
    /// the derivation cannot express.
    public func mint(_ request: R2CredentialRequest, now: Int, endpoint: String) throws(SigV4Error)
        -> R2TemporaryCredentials
    {
        let jwt = try signedJWT(request, issuedAt: now)
        return R2TemporaryCredentials(
            accessKeyID: parent.accessKeyID,
            secretAccessKey: Secret(try sha256Hex(jwt.utf8)),
            sessionToken: Secret(Base64.encode(("jwt/" + jwt).utf8)),
            jwt: Secret(jwt), issuedAt: now, expiresAt: now + request.ttlSeconds, endpoint: endpoint)
    }
}
