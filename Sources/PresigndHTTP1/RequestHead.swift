/// A request line and its header fields (RFC 9112 §3), as decoded or to be encoded.
public struct RequestHead: Sendable, Equatable {
    /// The method token, case-sensitive (RFC 9110 §9.1).
    public var method: String
    /// The request-target exactly as received (RFC 9112 §3.2): origin-form (`/path?query`), absolute-form
    /// (`http://host/path`, returned as-is for the router to judge), authority-form (CONNECT only) or `*`
    /// (OPTIONS only). Always visible ASCII.
    public var target: String
    /// HTTP/1.0 or HTTP/1.1 (a received 1.x above 1.1 is reported as 1.1).
    public var version: HTTPVersion
    /// Header fields in received order. Repeated identical `Content-Length` fields are collapsed into one.
    public var headers: HTTPHeaders

    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = .init()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }
}
