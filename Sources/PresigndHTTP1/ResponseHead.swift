/// A status line and its header fields (RFC 9112 §4), as decoded or to be encoded.
public struct ResponseHead: Sendable, Equatable {
    /// HTTP/1.0 or HTTP/1.1 (a received 1.x above 1.1 is reported as 1.1).
    public var version: HTTPVersion
    /// The three-digit status code, 100...599.
    public var status: Int
    /// The reason phrase as received; may be empty (RFC 9112 §4: clients ignore it).
    public var reason: String
    /// Header fields in received order. Repeated identical `Content-Length` fields are collapsed into one.
    public var headers: HTTPHeaders
    /// Set by a `ResponseDecoder` with `forwardsRawFields`: the end-to-end field lines as received and
    /// validated (every line but the hop-by-hop ones, `isHopByHopField`), each ending in CRLF, without the
    /// final empty line: what a proxy forwards. `headers` is then empty (the decoder read the framing fields
    /// from the bytes).
    public var rawFields: [UInt8]?

    public init(version: HTTPVersion = .http1_1, status: Int, reason: String? = nil, headers: HTTPHeaders = .init()) {
        self.version = version
        self.status = status
        self.reason = reason ?? HTTPEncoder.reasonPhrase(for: status)
        self.headers = headers
    }

    /// A 1xx response: interim, followed by the final response to the same request (RFC 9110 §15.2).
    public var isInterim: Bool { (100..<200).contains(status) }

    /// Response fields a proxy does not forward: the hop-by-hop ones (RFC 9110 §7.6.1: `Connection`,
    /// `Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Transfer-Encoding`, `Upgrade`) and
    /// `Proxy-Authenticate`, which is meant for a proxy's own client. Names compare ignoring ASCII case.
    public static func isHopByHopField(_ name: some Collection<UInt8>) -> Bool {
        if let result = name.withContiguousStorageIfAvailable({ isHopByHopField($0) }) { return result }
        return Array(name).withUnsafeBufferPointer { isHopByHopField($0) }
    }

    /// `isHopByHopField` on contiguous bytes (the decoder's path: no generic byte walk).
    static func isHopByHopField(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        switch name.count {
        case 2: ASCII.equalsLowercase(name, "te")
        case 7: ASCII.equalsLowercase(name, "trailer") || ASCII.equalsLowercase(name, "upgrade")
        case 10: ASCII.equalsLowercase(name, "connection") || ASCII.equalsLowercase(name, "keep-alive")
        case 16: ASCII.equalsLowercase(name, "proxy-connection")
        case 17: ASCII.equalsLowercase(name, "transfer-encoding")
        case 18: ASCII.equalsLowercase(name, "proxy-authenticate")
        default: false
        }
    }
}
