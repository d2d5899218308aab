import PresigndPolicy
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
}
