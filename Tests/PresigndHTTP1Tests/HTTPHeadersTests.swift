import PresigndHTTP1
import Testing

@Suite struct HTTPHeadersTests {
    @Test func looksUpNamesCaseInsensitivelyInOrder() {
        let headers: HTTPHeaders = ["Host": "h", "X-A": "1", "x-a": "2"]
        #expect(headers["HOST"] == "h")
        #expect(headers["x-A"] == "1")
        #expect(headers.values("X-A") == ["1", "2"])
        #expect(headers.contains(name: "host") && !headers.contains(name: "hos"))
        #expect(headers.count == 3)
        #expect(headers["missing"] == nil)
    }

    @Test func removesEveryFieldOfAName() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.remove(name: "a")
        #expect(headers == ["B": "2"])
    }

    @Test func replacesTheFirstAndDropsTheRest() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.replaceOrAdd(name: "A", value: "9")
        #expect(headers == ["A": "9", "B": "2"])
        headers.replaceOrAdd(name: "C", value: "4")
        #expect(headers == ["A": "9", "B": "2", "C": "4"])
    }

    @Test func iteratesInInsertionOrder() {
        var headers = HTTPHeaders()
        headers.add(name: "Z", value: "1")
        headers.add(name: "A", value: "2")
        #expect(headers.map(\.name) == ["Z", "A"])
        #expect(headers.map(\.value) == ["1", "2"])
    }
}
