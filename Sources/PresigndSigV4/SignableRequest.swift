/// A request head ready to be signed: the path and query already canonical (they are what goes on the
/// wire), headers as they will be sent.
public struct SignableRequest: Sendable {
    /// Upper case, as sent (`GET`).
    public var method: String
    /// The canonical URI, already UriEncoded (`URIEncoding.canonicalPath`): exactly the wire path (§2.3).
    public var path: String
    /// Decoded parameters in any order; the signer sorts and encodes them (§3).
    public var query: [QueryParameter]
    /// Headers as sent, including `Host`, in arrival order; repeated names allowed (§4.1).
    public var headers: [(name: String, value: String)]

    public init(method: String, path: String, query: [QueryParameter] = [], headers: [(name: String, value: String)]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }
}

/// Which headers of a `SignableRequest` go into the signature.
public enum SignedHeaderSelection: Sendable {
    /// `HeaderPolicy` decides; stripped headers are dropped, presign query parameters too (§4, §8).
    case s3Policy
    /// Every header given is signed (the generic AWS test vectors); only the values the signer sets itself
    /// (`authorization`, `x-amz-date`, and the content-sha256/token headers it adds) are replaced.
    case all
}
