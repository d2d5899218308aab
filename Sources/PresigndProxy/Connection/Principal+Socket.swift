import PresigndConfig
import PresigndIO

extension Principal {
    /// The principal of an accepted socket: the kernel's record of a unix peer (`SO_PEERCRED`), or the TCP
    /// source address. Unix credentials that cannot be read make an `unknown` principal, which only
    /// buckets without an `allow` list serve.
    init(fd: Int32, peer: SocketAddress?) {
        if let peer, !peer.bytes.isEmpty {
            self.init(peer: .tcp(IPAddress(bytes: peer.bytes)))
        } else if let credentials = PeerCredentials(fd: fd) {
            self.init(peer: .unix(uid: credentials.uid, gid: credentials.gid, pid: credentials.pid))
        } else {
            self.init(peer: .unknown)
        }
    }
}
