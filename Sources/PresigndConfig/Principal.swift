/// Who is asking: the peer of a connection (credentials of a unix-socket peer, from `SO_PEERCRED`, or a TCP
/// source address) and, when a bearer token was presented, the token's configured name.
public struct Principal: Sendable, Hashable, CustomStringConvertible {
    public enum Peer: Sendable, Hashable {
        case unix(uid: UInt32, gid: UInt32, pid: Int32)
        case tcp(IPAddress)
        /// Credentials that could not be read: matches only patterns that match anyone.
        case unknown
    }

    public var peer: Peer
    /// The name of the `[token.NAME]` presented, if any.
    public var token: String?

    public init(peer: Peer, token: String? = nil) {
        self.peer = peer
        self.token = token
    }

    /// For logs and `presignd explain`: `uid:1000`, `addr:10.0.0.1`, `token:ci`.
    public var description: String {
        if let token { return "token:" + token }
        switch peer {
        case .unix(let uid, _, _): return "uid:\(uid)"
        case .tcp(let address): return "addr:\(address)"
        case .unknown: return "unknown"
        }
    }

    /// A bounded metric label: `token:NAME` (names come from the configuration), else the kind of peer only,
    /// never the uid or address.
    public var metricLabel: String {
        if let token { return "token:" + token }
        switch peer {
        case .unix: return "unix"
        case .tcp: return "tcp"
        case .unknown: return "unknown"
        }
    }
}

/// One entry of a bucket's `allow` list: `uid:1000`, `gid:media` or `gid:100`, `cidr:10.0.0.0/8`, `unix:any`,
/// `tcp:any`, `token:NAME`.
public enum PrincipalPattern: Sendable, Hashable, CustomStringConvertible {
    case uid(UInt32)
    case gid(UInt32)
    case cidr(CIDR)
    case unixAny
    case tcpAny
    case token(String)

    public func matches(_ principal: Principal) -> Bool {
        switch (self, principal.peer) {
        case (.uid(let wanted), .unix(let uid, _, _)): wanted == uid
        case (.gid(let wanted), .unix(_, let gid, _)): wanted == gid
        case (.cidr(let range), .tcp(let address)): range.contains(address)
        case (.unixAny, .unix): true
        case (.tcpAny, .tcp): true
        case (.token(let name), _): principal.token == name
        default: false
        }
    }

    public var description: String {
        switch self {
        case .uid(let uid): "uid:\(uid)"
        case .gid(let gid): "gid:\(gid)"
        case .cidr(let range): "cidr:\(range)"
        case .unixAny: "unix:any"
        case .tcpAny: "tcp:any"
        case .token(let name): "token:\(name)"
        }
    }
}
