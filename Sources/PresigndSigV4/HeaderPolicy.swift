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
        // Dispatch on the first byte so the common names cost one or two comparisons.
        switch name.utf8.first {
        case UInt8(ascii: "x"):
            if hasPrefix(name, "x-amz-") {
                switch name {
                // §4.4: replaced by the signer's own values.
                case "x-amz-date", "x-amz-content-sha256", "x-amz-security-token": return .strip
                // §4.2: every other forwarded x-amz-* header MUST be signed.
                default: return .sign
                }
            }
            return hasPrefix(name, "x-forwarded-") ? .strip : .forwardUnsigned  // §4.4 proxy bookkeeping
        case UInt8(ascii: "h"):
            return name == "host" ? .sign : .forwardUnsigned  // §4.2
        case UInt8(ascii: "c"):
            if hasPrefix(name, "content-") { return .sign }  // §4.2 type/md5, §4.3 encoding/disposition/language/length
            if name == "cache-control" { return .sign }  // §4.3
            if name == "connection" || hasPrefix(name, "cf-") { return .strip }  // §4.4 hop-by-hop; Cloudflare edge
            return .forwardUnsigned
        case UInt8(ascii: "r"):
            return name == "range" ? .sign : .forwardUnsigned  // §4.3
        case UInt8(ascii: "i"):
            switch name {
            case "if-match", "if-none-match", "if-modified-since", "if-unmodified-since": return .sign  // §4.3
            default: return .forwardUnsigned
            }
        case UInt8(ascii: "d"):
            return name == "date" ? .sign : .forwardUnsigned  // §6: a forwarded Date may be signed
        case UInt8(ascii: "e"):
            switch name {
            case "expires": return .sign  // §4.3
            case "expect": return .strip  // §4.4: R2 has no 100 Continue
            default: return .forwardUnsigned
            }
        case UInt8(ascii: "p"):
            return hasPrefix(name, "proxy-") ? .strip : .forwardUnsigned  // §4.4 proxy-authenticate/-authorization/-connection
        default:
            switch name {
            // §4.4 hop-by-hop (RFC 9110 §7.6.1), the client's own auth, proxy bookkeeping.
            case "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "authorization", "via", "forwarded":
                return .strip
            // §4.4 user-agent, accept-encoding, traceparent, tracestate, baggage and anything else.
            default: return .forwardUnsigned
            }
        }
    }

    private static func hasPrefix(_ name: String, _ prefix: StaticString) -> Bool {
        let prefixBytes = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        var index = 0
        for byte in name.utf8 {
            if index == prefixBytes.count { return true }
            if byte != prefixBytes[index] { return false }
            index += 1
        }
        return index == prefixBytes.count
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
