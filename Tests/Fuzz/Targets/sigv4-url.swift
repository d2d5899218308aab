import PresigndSigV4

/// libFuzzer target `sigv4-url`: the signer's URL parsing (`URIEncoding.decodePath`, `canonicalPath`,
/// `parseQuery`, `canonicalQuery`). The first input byte picks options; the rest is a request target split at
/// the first `?`. Invariants: no crash, and canonical forms are fixed points (canonicalizing the wire path or
/// query presignd sends gives the same bytes again: encode once, no drift between what is signed and sent).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: count)
    guard let options = input.first else { return 0 }
    let plusIsSpace = options & 1 == 1
    let target = input.dropFirst()
    let question = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
    let rawPath = target[..<question]
    let rawQuery = question < target.endIndex ? target[(question + 1)...] : target[target.endIndex...]

    if let decoded = try? URIEncoding.decodePath(rawPath, plusIsSpace: plusIsSpace) {
        precondition(decoded.count <= rawPath.count, "decoding made the path longer")
    }
    if let path = try? URIEncoding.canonicalPath(rawPath: rawPath, plusIsSpace: plusIsSpace) {
        let again = try? URIEncoding.canonicalPath(rawPath: Array(path.utf8))
        precondition(again == path, "canonical path is not a fixed point")
    }
    if let parameters = try? URIEncoding.parseQuery(rawQuery: rawQuery) {
        let query = URIEncoding.canonicalQuery(parameters)
        guard let reparsed = try? URIEncoding.parseQuery(rawQuery: Array(query.utf8)) else {
            preconditionFailure("the canonical query does not parse")
        }
        precondition(URIEncoding.canonicalQuery(reparsed) == query, "canonical query is not a fixed point")
        precondition(reparsed.count == parameters.count, "canonical query changed the parameter count")
    }
    return 0
}
