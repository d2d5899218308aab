import PresigndPolicy
import Testing

/// The strict tokenizer DeleteObjects bodies and STS answers are read with.
@Suite struct XMLScannerTests {
    @Test func tokenizesElementsTextAndEntities() throws {
        let tokens = try XMLScanner.tokens(Array("<?xml version=\"1.0\"?><a x=\"1\"><b>1 &lt; 2</b><c/></a>".utf8))
        #expect(
            tokens == [
                .start(name: "a", hasAttributes: true, isEmpty: false),
                .start(name: "b", hasAttributes: false, isEmpty: false),
                .text("1 < 2"), .end(name: "b"), .start(name: "c", hasAttributes: false, isEmpty: true),
                .end(name: "a"),
            ])
    }

    @Test(arguments: [
        "<a><!-- c --></a>", "<a><![CDATA[x]]></a>", "<!DOCTYPE a><a/>", "<a><?pi x?></a>", "<a>&e;</a>", "<a",
        "<a></a >", "<a></b x>", "< >",
    ])
    func refusesWhatItCannotReadWithCertainty(_ text: String) {
        #expect(throws: XMLSyntaxError.self) { try XMLScanner.tokens(Array(text.utf8)) }
    }

    @Test func textsByPathRefuseMixedContentAndSecondRoots() throws {
        let tokens = try XMLScanner.tokens(Array("<r><k>1</k><s><k>2</k></s><k>3</k><k/></r>".utf8))
        #expect(try XMLScanner.texts(tokens, at: ["r", "k"]) == ["1", "3", ""])
        #expect(try XMLScanner.texts(tokens, at: ["r", "s", "k"]) == ["2"])
        let mixed = try XMLScanner.tokens(Array("<r><k>1<x/></k></r>".utf8))
        #expect(throws: XMLSyntaxError.self) { try XMLScanner.texts(mixed, at: ["r", "k"]) }
        let twoRoots = try XMLScanner.tokens(Array("<r/><r/>".utf8))
        #expect(throws: XMLSyntaxError.self) { try XMLScanner.texts(twoRoots, at: ["r"]) }
        let unclosed = try XMLScanner.tokens(Array("<r><k>1</k>".utf8))
        #expect(throws: XMLSyntaxError.self) { try XMLScanner.texts(unclosed, at: ["r", "k"]) }
    }
}
