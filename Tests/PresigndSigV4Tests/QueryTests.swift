import Testing

@testable import PresigndSigV4

/// The canonical query string (SIGV4-S3-RULES §3).
@Suite struct QueryTests {
    func canonical(_ raw: String) throws -> String {
        URIEncoding.canonicalQuery(try URIEncoding.parseQuery(rawQuery: Array(raw.utf8)))
    }

    @Test(arguments: [
        ("", ""), ("a=1&&b=2", "a=1&b=2"), ("&&", ""), ("uploads", "uploads="), ("uploads=", "uploads="),
        ("prefix=a+b", "prefix=a%20b"), ("prefix=a%2Bb", "prefix=a%2Bb"), ("k=a=b", "k=a%3Db"),
        ("Param-3=Value3&Param=Value2", "Param=Value2&Param-3=Value3"), ("acl&X-Amz-Foo=1", "X-Amz-Foo=1&acl="),
        ("Param1=value2&Param1=Value1", "Param1=Value1&Param1=value2"), ("k=2&k=1&k=10", "k=1&k=10&k=2"),
        ("a;b=1", "a%3Bb=1"), ("p=/x:y,z*~", "p=%2Fx%3Ay%2Cz%2A~"), ("%E1%88%B4=1", "%E1%88%B4=1"),
        ("k=%2f", "k=%2F"),
    ])
    func canonicalQueryFollowsTheRules(raw: String, expected: String) throws {
        #expect(try canonical(raw) == expected)
    }

    @Test func parseKeepsArrivalOrderAndDecodes() throws {
        let parameters = try URIEncoding.parseQuery(rawQuery: Array("b=2&a&c=x+y%21".utf8))
        #expect(parameters == [.init(name: "b", value: "2"), .init(name: "a", value: ""), .init(name: "c", value: "x y!")])
    }

    @Test(arguments: ["a=%", "a=%4", "%zz=1", "a=%C3"])
    func rejectsBadEscapesAndUTF8(raw: String) {
        #expect(throws: SigV4Error.self) { try URIEncoding.parseQuery(rawQuery: Array(raw.utf8)) }
    }

    @Test func presignParametersAreRecognisedCaseInsensitively() {
        for name in ["X-Amz-Algorithm", "x-amz-credential", "X-AMZ-DATE", "X-Amz-Expires", "X-Amz-SignedHeaders",
            "X-Amz-Signature", "X-Amz-Security-Token"] {
            #expect(PresignParameters.isPresignParameter(name: name), "\(name)")
        }
        for name in ["X-Amz-Foo", "versionId", "response-content-type", "x-id"] {
            #expect(!PresignParameters.isPresignParameter(name: name), "\(name)")
        }
    }
}
