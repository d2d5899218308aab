import PresigndCache
import PresigndConfig
import PresigndHTTP1

/// A cached answer the connection writes itself: the head, and the slices its body is cut from.
struct CachedHead: Equatable {
    var status: Int
    /// The stored fields and the framing (`CachePlanner`): `Content-Length`, `Content-Range`, `Accept-Ranges`,
    /// `X-Cache` when configured.
    var fields: HTTPHeaders
    /// The object's bytes the body carries, and the slices holding them (empty for HEAD and 304).
    var bytes: Range<Int>
    var slices: Range<Int>
}

/// Where a GET or HEAD of a cached bucket is answered (issue 23 §2 to §5), as far as the connection serves the
/// cache now: locally when the store holds every byte of the answer and the entry is fresh, upstream as before
/// otherwise (a miss, a revalidation due, a missing slice, several ranges, a version asked by id, an answer the
/// cache does not write: 412, 416). Pure; the policy has allowed the request before this is asked.
enum CacheRead: Equatable {
    case upstream
    case local(CachedHead)

    /// The most slices one local answer opens at once: their descriptors are queued in the client's output until
    /// sent (`SocketStream.appendFile`). A larger answer goes upstream until slices are opened as output drains.
    static let maxSlicesPerAnswer = 16

    static func decide(
        method: String, queryNames: [String], headers: HTTPHeaders, key: String, entry: CachedObject?, now: Int,
        config: CacheConfig
    ) -> CacheRead {
        guard
            case .lookUp(let forcesRevalidation) = Cacheability.request(
                method: method, queryNames: queryNames, headers: headers, key: key, config: config)
        else { return .upstream }
        // A version asked by id is another identity than the latest one the entry holds.
        guard queryNames.isEmpty, let entry else { return .upstream }
        let plan = CachePlanner.plan(
            method: method, headers: headers, entry: entry, knownMissing: false,
            forcesRevalidation: forcesRevalidation, now: now, config: config)
        switch plan {
        case .notModified(let fields):
            var fields = fields
            if config.xCacheHeader { fields.add(name: "X-Cache", value: "HIT") }
            return .local(CachedHead(status: 304, fields: fields, bytes: 0..<0, slices: 0..<0))
        case .serve(let answer):
            guard answer.missing.isEmpty, answer.framing.status != 416,
                answer.slices.count <= maxSlicesPerAnswer
            else { return .upstream }
            return .local(
                CachedHead(
                    status: answer.framing.status, fields: answer.headers,
                    bytes: method == "HEAD" ? 0..<0 : answer.framing.bytes, slices: answer.slices))
        case .notFound, .fill, .revalidate, .preconditionFailed, .uncached:
            return .upstream
        }
    }
}
