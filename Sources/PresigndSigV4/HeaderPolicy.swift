/// What the signer does with one client header (SIGV4-S3-RULES §4.2–4.4).
public enum HeaderRule: Sendable, Equatable {
    /// Forward it and sign it.
    case sign
    /// Forward it, leave it out of the signature (intermediaries may change it).
    case forwardUnsigned
    /// Never forward it: hop-by-hop, proxy bookkeeping, or a value the signer sets itself.
    case strip
}

/// The S3 header policy: which client headers are signed, forwarded unsigned, or stripped.
public enum HeaderPolicy {
    /// The rule for a header name that is already lower case.
    public static func rule(forLowercasedName name: String) -> HeaderRule {
        if name.utf8.starts(with: "x-amz-".utf8) {
            switch name {
            // §4.4: replaced by the signer's own values.
            case "x-amz-date", "x-amz-content-sha256", "x-amz-security-token": return .strip
            // §4.2: every other forwarded x-amz-* header MUST be signed.
            default: return .sign
            }
        }
        switch name {
        // §4.2 MUST sign; `date` may be signed (§6, the S3 PUT example signs it).
        case "host", "content-type", "content-md5", "date": return .sign
        // §4.3 SHOULD sign when forwarded unchanged; content-length only when that exact value is sent
        // (the proxy passes it only then).
        case "range", "content-length", "cache-control", "expires",
            "if-match", "if-none-match", "if-modified-since", "if-unmodified-since":
            return .sign
        // §4.4 hop-by-hop (RFC 9110 §7.6.1) plus proxy-connection and expect (R2 has no 100 Continue).
        case "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-connection",
            "expect":
            return .strip
        // §4.4: the client's own auth is replaced; proxy bookkeeping is never signed.
        case "authorization", "via", "forwarded": return .strip
        default: break
        }
        if name.utf8.starts(with: "proxy-".utf8) || name.utf8.starts(with: "x-forwarded-".utf8)
            || name.utf8.starts(with: "cf-".utf8)
        {
            return .strip  // §4.4 proxy-authenticate/-authorization, x-forwarded-*, cf-* (Cloudflare edge)
        }
        if name.utf8.starts(with: "content-".utf8) {
            return .sign  // §4.3 content-encoding, -disposition, -language, ...
        }
        // §4.4 user-agent, accept-encoding, x-amzn-trace-id, traceparent, tracestate, baggage, and anything
        // else: safe to forward, not signed.
        return .forwardUnsigned
    }

    /// Names listed in a `Connection` header value, lower-cased: those headers are hop-by-hop too (§4.4,
    /// RFC 9110 §7.6.1).
    public static func connectionListedNames(_ value: String) -> [String] {
        value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).compactMap { token in
            let trimmed = token.drop(while: { $0 == 0x20 || $0 == 0x09 })
            let end = trimmed.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
            guard let end else { return nil }
            return ByteTables.asciiLowercased(String(decoding: trimmed[...end], as: UTF8.self))
        }
    }
}

/// Query parameters of query-string auth: the client's are stripped, the signer sets its own (§4.4, §7).
public enum PresignParameters {
    /// `X-Amz-Algorithm`, `-Credential`, `-Date`, `-Expires`, `-SignedHeaders`, `-Signature`,
    /// `-Security-Token`, compared case-insensitively.
    public static func isPresignParameter(name: String) -> Bool {
        guard name.utf8.count >= 10, name.utf8.count <= 20 else { return false }
        switch ByteTables.asciiLowercased(name) {
        case "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-expires", "x-amz-signedheaders",
            "x-amz-signature", "x-amz-security-token":
            return true
        default:
            return false
        }
    }
}
