internal import PresigndHTTP1

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
        ASCIIBytes.withBytes(name) { rule(forLowercasedName: $0) }
    }

    /// The rule for lower-case name bytes (the signer's form; `rule(forLowercasedName:)` for a `String`).
    public static func rule(forLowercasedName name: UnsafeBufferPointer<UInt8>) -> HeaderRule {
        typealias B = ASCIIBytes
        // Dispatch on the first byte so the common names cost one or two comparisons.
        switch name.first {
        case UInt8(ascii: "x"):
            if B.hasPrefix(name, "x-amz-") {
                // §4.4: replaced by the signer's own values.
                if B.equals(name, "x-amz-date") || B.equals(name, "x-amz-content-sha256")
                    || B.equals(name, "x-amz-security-token")
                {
                    return .strip
                }
                return .sign  // §4.2: every other forwarded x-amz-* header MUST be signed.
            }
            return B.hasPrefix(name, "x-forwarded-") ? .strip : .forwardUnsigned  // §4.4 proxy bookkeeping
        case UInt8(ascii: "h"):
            return B.equals(name, "host") ? .sign : .forwardUnsigned  // §4.2
        case UInt8(ascii: "c"):
            // §4.2 type/md5, §4.3 encoding/disposition/language/length
            if B.hasPrefix(name, "content-") { return .sign }
            if B.equals(name, "cache-control") { return .sign }  // §4.3
            // §4.4 hop-by-hop; Cloudflare's edge fields, but for the request extensions R2 documents (signed:
            // they change what the request does). The rewriter forwards those to R2 upstreams only.
            if B.hasPrefix(name, "cf-") { return isR2Extension(name) ? .sign : .strip }
            if B.equals(name, "connection") { return .strip }
            return .forwardUnsigned
        case UInt8(ascii: "r"):
            return B.equals(name, "range") ? .sign : .forwardUnsigned  // §4.3
        case UInt8(ascii: "i"):
            if B.equals(name, "if-match") || B.equals(name, "if-none-match") || B.equals(name, "if-modified-since")
                || B.equals(name, "if-unmodified-since")
            {
                return .sign  // §4.3
            }
            return .forwardUnsigned
        case UInt8(ascii: "d"):
            return B.equals(name, "date") ? .sign : .forwardUnsigned  // §6: a forwarded Date may be signed
        case UInt8(ascii: "e"):
            if B.equals(name, "expires") { return .sign }  // §4.3
            if B.equals(name, "expect") { return .strip }  // §4.4: R2 has no 100 Continue
            return .forwardUnsigned
        case UInt8(ascii: "p"):
            // §4.4 proxy-authenticate, -authorization, -connection
            return B.hasPrefix(name, "proxy-") ? .strip : .forwardUnsigned
        default:
            // §4.4 hop-by-hop (RFC 9110 §7.6.1), the client's own auth, proxy bookkeeping.
            if B.equals(name, "keep-alive") || B.equals(name, "te") || B.equals(name, "trailer")
                || B.equals(name, "transfer-encoding") || B.equals(name, "upgrade") || B.equals(name, "authorization")
                || B.equals(name, "via") || B.equals(name, "forwarded")
            {
                return .strip
            }
            // §4.4 user-agent, accept-encoding, traceparent, tracestate, baggage and anything else.
            return .forwardUnsigned
        }
    }

    /// The `cf-*` request headers R2 documents as S3 API extensions (developers.cloudflare.com/r2/api/s3/extensions):
    /// `cf-create-bucket-if-missing` (PutObject, CreateMultipartUpload) and the `cf-copy-destination-if-*`
    /// conditions of CopyObject. (Its ListBuckets headers never reach R2: presignd answers the service root.)
    public static let r2ExtensionHeaders: [StaticString] = [
        "cf-create-bucket-if-missing", "cf-copy-destination-if-match", "cf-copy-destination-if-none-match",
        "cf-copy-destination-if-modified-since", "cf-copy-destination-if-unmodified-since",
    ]

    /// Whether lower-case `name` is one of `r2ExtensionHeaders`.
    public static func isR2Extension(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        r2ExtensionHeaders.contains { ASCIIBytes.equals(name, $0) }
    }

    /// Names listed in a `Connection` header value, lower-cased: those headers are hop-by-hop too (§4.4,
    /// RFC 9110 §7.6.1).
    public static func connectionListedNames(_ value: String) -> [String] {
        var tokens: [UInt8] = []
        var spans: [Range<Int>] = []
        ASCIIBytes.withBytes(value) { appendConnectionTokens($0, to: &tokens, spans: &spans) }
        return spans.map { String(decoding: tokens[$0], as: UTF8.self) }
    }

    /// Byte form of `connectionListedNames`: appends each lower-cased token to `tokens` and its range to `spans`.
    /// Tokens are split on `,`, trimmed of spaces and tabs; empty ones are skipped.
    static func appendConnectionTokens(
        _ value: UnsafeBufferPointer<UInt8>, to tokens: inout [UInt8], spans: inout [Range<Int>]
    ) {
        var start = 0
        while start <= value.count {
            var end = start
            while end < value.count, value[end] != UInt8(ascii: ",") { end += 1 }
            var first = start
            var last = end
            while first < last, value[first] == 0x20 || value[first] == 0x09 { first += 1 }
            while last > first, value[last - 1] == 0x20 || value[last - 1] == 0x09 { last -= 1 }
            if last > first {
                let tokenStart = tokens.count
                ASCIIBytes.appendLowercased(UnsafeBufferPointer(rebasing: value[first..<last]), to: &tokens)
                spans.append(tokenStart..<tokens.count)
            }
            start = end + 1
        }
    }
}

/// Query parameters of query-string auth: the client's are stripped, the signer sets its own (§4.4, §7).
public enum PresignParameters {
    /// `X-Amz-Algorithm`, `-Credential`, `-Date`, `-Expires`, `-SignedHeaders`, `-Signature`,
    /// `-Security-Token`, compared case-insensitively.
    public static func isPresignParameter(name: String) -> Bool {
        let count = name.utf8.count
        guard count >= 10, count <= 20 else { return false }
        return ASCIIBytes.withBytes(name) { bytes in
            ASCII.equalsLowercase(bytes, "x-amz-algorithm") || ASCII.equalsLowercase(bytes, "x-amz-credential")
                || ASCII.equalsLowercase(bytes, "x-amz-date") || ASCII.equalsLowercase(bytes, "x-amz-expires")
                || ASCII.equalsLowercase(bytes, "x-amz-signedheaders")
                || ASCII.equalsLowercase(bytes, "x-amz-signature")
                || ASCII.equalsLowercase(bytes, "x-amz-security-token")
        }
    }
}
