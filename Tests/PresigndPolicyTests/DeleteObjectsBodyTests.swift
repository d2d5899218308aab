import Foundation
import PresigndPolicy
import PresigndTestSupport
import Testing

@Suite struct DeleteObjectsBodyTests {
    static func keys(_ body: String) -> [String]? {
        try? DeleteObjectsBody.keys(Array(body.utf8))
    }

    @Test func readsEveryKeyWithEntitiesDecoded() {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Object><Key>a&amp;b</Key><VersionId>1</VersionId></Object>
              <Object><Key>&#x73;ecret/&#233;</Key></Object>
              <Quiet>true</Quiet>
            </Delete>
            """
        #expect(Self.keys(body) == ["a&b", "secret/é"])
    }

    @Test(arguments: [
        "<Delete><!-- c --><Object><Key>a</Key></Object></Delete>",
        "<Delete><Object><Key><![CDATA[a]]></Key></Object></Delete>",
        "<!DOCTYPE x [<!ENTITY e \"secret\">]><Delete><Object><Key>&e;</Key></Object></Delete>",
        "<Delete><Object><s3:Key>a</s3:Key></Object></Delete>",
        "<Delete><Key>a</Key></Delete>",
        "<Delete><Object><Key>a</Key></Object>",
        "<Other><Object><Key>a</Key></Object></Other>",
        "<Delete></Delete>",
        "<Delete><Object><Key id=\"1\">a</Key></Object></Delete>",
        "<Delete><Object><Key>a</Object></Key></Delete>",
        "<Delete><Object><Key>a&bogus;</Key></Object></Delete>",
    ])
    func refusesWhatItCannotReadWithCertainty(_ body: String) {
        #expect(Self.keys(body) == nil)
    }

    @Test func refusesMoreThanAThousandKeys() {
        let objects = (0...1000).map { "<Object><Key>k\($0)</Key></Object>" }.joined()
        #expect(Self.keys("<Delete>" + objects + "</Delete>") == nil)
        let thousand = (0..<1000).map { "<Object><Key>k\($0)</Key></Object>" }.joined()
        #expect(Self.keys("<Delete>" + thousand + "</Delete>")?.count == 1000)
    }

    /// Untrusted input: mutated bodies never trap, and whatever parses reads the same once written back.
    @Test func mutatedBodiesParseOrAreRefusedAndRoundTrip() {
        let seed =
            Array(
                "<?xml version=\"1.0\"?><Delete><Object><Key>incoming/a&amp;b</Key><VersionId>1</VersionId></Object>"
                    .utf8) + Array("<Object><Key>&#x73;x</Key></Object><Quiet>true</Quiet></Delete>".utf8)
        let alphabet = Array("<>/&;#x!?\"=Key Object Delete".utf8)
        var random = SplitMix(seed: 19)
        var parsed = 0
        for _ in 0..<5000 {
            var body = seed
            for _ in 0...Int.random(in: 0..<4, using: &random) {
                let index = Int.random(in: 0..<body.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: body[index] = alphabet.randomElement(using: &random)!
                case 1: body.remove(at: index)
                default: body.insert(alphabet.randomElement(using: &random)!, at: index)
                }
            }
            guard let keys = try? DeleteObjectsBody.keys(body) else { continue }
            parsed += 1
            let escaped = keys.map {
                $0.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            }
            #expect(
                Self.keys("<Delete>" + escaped.map { "<Object><Key>\($0)</Key></Object>" }.joined() + "</Delete>")
                    == keys)
        }
        #expect(parsed > 0, "no mutation parsed: the seed is not a valid body")
    }
}
