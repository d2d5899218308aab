import Foundation
import Testing

@testable import PresigndSigV4

/// botocore's older copy of the suite: the 3 cases aws-c-auth lacks (vectors README).
@Suite struct LegacyVectorTests {
    @Test(arguments: ["get-special-character", "get-vanilla-query-order-key", "get-vanilla-query-order-value"])
    func legacyCaseMatchesStageByStage(name: String) throws {
        let base = "legacy-aws4-testsuite/\(name)/\(name)"
        let request = try VectorRequest(try VectorFiles.text("\(base).req"))
        let signer = try Signer(
            credentials: Credentials(
                accessKeyID: "AKIDEXAMPLE", secretAccessKey: Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")),
            region: "us-east-1", service: "service")
        let date = try #require(AmzDate(parsing: "20150830T123600Z"))
        let signed = try signer.sign(
            try request.signable(), payload: .emptyBody, date: date, selection: .all, addsContentSHA256Header: false)
        #expect(signed.canonicalRequest == (try VectorFiles.text("\(base).creq")))
        #expect(signed.stringToSign == (try VectorFiles.text("\(base).sts")))
        #expect(signed.authorization == (try VectorFiles.text("\(base).authz")))
        // The client's own X-Amz-Date is replaced, not duplicated.
        #expect(signed.headers.filter { $0.name.lowercased() == "x-amz-date" }.count == 1)
    }
}
