import Foundation
import Testing

@testable import PresigndSigV4

/// The aws-c-auth copy of the AWS SigV4 suite, under S3 rules, stage by stage (vectors README).
@Suite struct AWSSuiteVectorTests {
    /// The 32 cases README lists as reproduced byte for byte under S3 rules.
    static let s3Cases = [
        "get-vanilla", "get-unreserved", "get-utf8", "get-space-normalized", "get-space-unnormalized",
        "get-slash-unnormalized", "get-slashes-unnormalized", "get-slash-dot-slash-unnormalized",
        "get-slash-pointless-dot-unnormalized", "get-relative-unnormalized", "get-relative-relative-unnormalized",
        "get-vanilla-query", "get-vanilla-empty-query-key", "get-vanilla-query-order-encoded",
        "get-vanilla-query-order-key-case", "get-vanilla-query-unreserved", "get-vanilla-utf8-query",
        "post-vanilla-query", "post-vanilla-empty-query-value", "get-header-key-duplicate",
        "get-header-value-multiline", "get-header-value-order", "get-header-value-trim", "post-header-key-case",
        "post-header-key-sort", "post-header-value-case", "post-vanilla", "post-x-www-form-urlencoded",
        "post-x-www-form-urlencoded-parameters", "get-vanilla-with-session-token", "post-sts-header-before",
        "post-sts-header-after",
    ]

    /// Generic-service results an S3 signer must NOT reproduce, with their S3 twins.
    static let normalizedTwins = [
        ("get-relative-normalized", "get-relative-unnormalized"),
        ("get-relative-relative-normalized", "get-relative-relative-unnormalized"),
        ("get-slash-dot-slash-normalized", "get-slash-dot-slash-unnormalized"),
        ("get-slash-normalized", "get-slash-unnormalized"),
        ("get-slash-pointless-dot-normalized", "get-slash-pointless-dot-unnormalized"),
        ("get-slashes-normalized", "get-slashes-unnormalized"),
    ]

    struct Case {
        var name: String
        var request: VectorRequest
        var signer: Signer
        var date: AmzDate
        var payload: PayloadHash
        var signsBody: Bool
        var omitsToken: Bool
        var expires: Int

        init(_ name: String) throws {
            self.name = name
            request = try VectorRequest(try VectorFiles.text("\(name)/request.txt"))
            let context = try VectorFiles.json("\(name)/context.json")
            let credentials = try #require(context["credentials"] as? [String: String])
            signer = try Signer(
                credentials: Credentials(
                    accessKeyID: try #require(credentials["access_key_id"]),
                    secretAccessKey: Secret(try #require(credentials["secret_access_key"])),
                    sessionToken: credentials["token"].map(Secret.init)),
                region: try #require(context["region"] as? String), service: try #require(context["service"] as? String))
            let timestamp = try #require(context["timestamp"] as? String)
            date = try #require(AmzDate(parsing: timestamp.replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")))
            signsBody = context["sign_body"] as? Bool ?? false
            omitsToken = context["omit_session_token"] as? Bool ?? false
            expires = context["expiration_in_seconds"] as? Int ?? 3600
            payload = signsBody ? .sha256(hex: try sha256Hex(Array(request.body.utf8))) : .emptyBody
        }

        func headerSigned() throws -> SignedRequest {
            try signer.sign(
                try request.signable(), payload: payload, date: date, selection: .all,
                addsContentSHA256Header: signsBody, signsSessionToken: !omitsToken)
        }

        func presigned() throws -> PresignedURL {
            let signable = try request.signable()
            return try signer.presign(
                method: request.method, host: request.host, path: signable.path, query: signable.query,
                headers: request.headers.filter { $0.name.lowercased() != "host" }, expires: expires, date: date,
                payload: payload, signsSessionToken: !omitsToken)
        }
    }

    @Test(arguments: s3Cases)
    func headerSigningMatchesStageByStage(name: String) throws {
        let vector = try Case(name)
        let signed = try vector.headerSigned()
        #expect(signed.canonicalRequest == (try VectorFiles.text("\(name)/header-canonical-request.txt")))
        #expect(signed.stringToSign == (try VectorFiles.text("\(name)/header-string-to-sign.txt")))
        #expect(signed.signature == (try VectorFiles.text("\(name)/header-signature.txt")))
        let expectedAuthorization = try VectorFiles.text("\(name)/header-signed-request.txt").authorizationLine()
        #expect(signed.authorization == expectedAuthorization)
        #expect(signed.headers.last?.name == "Authorization")
    }

    @Test(arguments: s3Cases)
    func querySigningMatchesStageByStage(name: String) throws {
        let vector = try Case(name)
        let presigned = try vector.presigned()
        #expect(presigned.canonicalRequest == (try VectorFiles.text("\(name)/query-canonical-request.txt")))
        #expect(presigned.stringToSign == (try VectorFiles.text("\(name)/query-string-to-sign.txt")))
        #expect(presigned.signature == (try VectorFiles.text("\(name)/query-signature.txt")))
        let signedLine = try VectorFiles.text("\(name)/query-signed-request.txt")
        #expect(signedLine.contains("X-Amz-Signature=\(presigned.signature) "))
        #expect(presigned.url.hasSuffix("&X-Amz-Signature=\(presigned.signature)"))
    }

    @Test(arguments: normalizedTwins)
    func normalizedGenericCaseDiffersAndTwinMatches(normalized: String, twin: String) throws {
        let signed = try Case(normalized).headerSigned()
        let genericRequest = try VectorFiles.text("\(normalized)/header-canonical-request.txt")
        let s3Request = try VectorFiles.text("\(twin)/header-canonical-request.txt")
        let canonicalURI = signed.canonicalRequest.components(separatedBy: "\n")[1]
        #expect(canonicalURI != genericRequest.components(separatedBy: "\n")[1])
        #expect(canonicalURI == s3Request.components(separatedBy: "\n")[1])
        #expect(canonicalURI == (try Case(normalized).request.rawPath))
        #expect(signed.canonicalRequest != genericRequest)
        #expect(signed.canonicalRequest == s3Request)
        #expect(signed.signature == (try VectorFiles.text("\(twin)/header-signature.txt")))
        #expect(signed.signature != (try VectorFiles.text("\(normalized)/header-signature.txt")))
    }
}
