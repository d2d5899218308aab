import Testing

@testable import PresigndProxy

@Suite struct ASCIINameTests {
    @Test(arguments: ["Connection", "keep-alive", "TE", "Trailer", "UPGRADE", "Transfer-Encoding", "Proxy-Connection",
        "proxy-authenticate"])
    func recognizesHopByHopResponseHeaders(name: String) {
        #expect(ASCIIName.isHopByHopResponseHeader(name))
    }

    @Test(arguments: ["Content-Length", "ETag", "x-amz-request-id", "Tee", "Connections", "Keep-Alive2"])
    func passesEndToEndHeaders(name: String) {
        #expect(!ASCIIName.isHopByHopResponseHeader(name))
    }

    @Test(arguments: [
        ("/a/b?x=1#frag", "/a/b", "x=1"), ("/a/b", "/a/b", ""), ("/a?", "/a", ""), ("/a#x?y", "/a", ""),
        ("/?list-type=2&prefix=%C3%A9", "/", "list-type=2&prefix=%C3%A9"),
    ])
    func splitsTargetsAtTheFirstQuestionMarkBeforeAnyFragment(target: String, path: String, query: String) {
        let (gotPath, gotQuery) = RequestRewriter.splitTarget(target[...])
        #expect(String(gotPath) == path)
        #expect(String(gotQuery) == query)
    }

    @Test func splitsASubstringThatDoesNotStartAtItsBase() {
        let whole = "GET /a/é?x=1&y=?#frag HTTP/1.1"
        let target = whole.dropFirst(4).prefix(while: { $0 != " " })
        let (path, query) = RequestRewriter.splitTarget(target)
        #expect(String(path) == "/a/é" && String(query) == "x=1&y=?")
    }
}
