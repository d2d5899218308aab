import PresigndHTTP1

/// What remains of the proxy's own name helpers: `ClientConnection+Response` calls it until the connection rewrite
/// (issue 18) calls `ResponseHead.isHopByHopField` itself and this file goes. The case fold is `ASCII`'s
/// (PresigndHTTP1).
enum ASCIIName {
    /// Hop-by-hop response fields presignd never forwards to its client (`ResponseHead.isHopByHopField`).
    static func isHopByHopResponseHeader(_ name: String) -> Bool {
        ResponseHead.isHopByHopField(name.utf8)
    }
}
