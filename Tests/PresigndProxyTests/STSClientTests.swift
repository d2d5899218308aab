import PresigndConfig
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// The STS query call: the form body, the signature (checked against botocore's `SigV4Auth` for service `sts`,
/// computed independently with the same inputs), and the XML answers read or refused.
@Suite struct STSClientTests {
    static let sts = STSEndpoint(
        endpoint: Endpoint(scheme: .https, host: "sts.eu-west-1.amazonaws.com"), region: "eu-west-1")
    static let parameters = [
        ("RoleArn", "arn:aws:iam::123456789012:role/demo"), ("RoleSessionName", "presignd"),
        ("DurationSeconds", "3600"),
    ]
    /// 2015-08-30T12:36:00Z, the AWS SigV4 test suite's date.
    static let date = AmzDate(epochSeconds: 1_440_938_160)

    static func prepared(token: String?) throws -> STSClient.PreparedRequest {
        let keys = Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            sessionToken: token.map(Secret.init))
        return try STSClient.prepare(
            action: "AssumeRole", parameters: parameters, sts: sts, credentials: keys, date: date
        ).get()
    }

    static func header(_ request: STSClient.PreparedRequest, _ name: String) -> String? {
        request.headers.first { $0.0.lowercased() == name }?.1
    }

    @Test func formEncodesTheParametersAfterActionAndVersion() throws {
        let request = try Self.prepared(token: nil)
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdemo"
                + "&RoleSessionName=presignd&DurationSeconds=3600")
        #expect(Self.header(request, "content-type") == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(Self.header(request, "host") == nil, "the HTTP client sends Host (the value signed)")
    }

    @Test func signsForServiceSTSAsBotocoreDoes() throws {
        let request = try Self.prepared(token: nil)
        #expect(Self.header(request, "x-amz-date") == "20150830T123600Z")
        #expect(Self.header(request, "x-amz-content-sha256") == nil)
        #expect(
            Self.header(request, "authorization")
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/eu-west-1/sts/aws4_request, "
                + "SignedHeaders=content-type;host;x-amz-date, "
                + "Signature=9fe3a5bb0b9b7fbd137d28e83af38ac79255da1e3296bc034220b2557d828cae")
    }

    @Test func signsTheSessionTokenOfTemporarySourceKeys() throws {
        let request = try Self.prepared(token: "session-token-value")
        #expect(Self.header(request, "x-amz-security-token") == "session-token-value")
        #expect(
            Self.header(request, "authorization")?.hasSuffix(
                "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, "
                    + "Signature=2ab3ba7bbb76ee2936da710f15cbb0b6f09c46b15b75afb4994069fce2ccb336") == true)
    }

    @Test func unsignedCallsCarryOnlyTheContentType() throws {
        let request = try STSClient.prepare(
            action: "AssumeRoleWithWebIdentity", parameters: [("WebIdentityToken", "a.b.c")], sts: Self.sts,
            credentials: nil, date: Self.date
        ).get()
        #expect(request.headers.map(\.0) == ["Content-Type"])
    }

    /// The shape of STS's documented AssumeRole answer (API Reference, AssumeRole, "Examples").
    static let answer = """
        <AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <AssumeRoleResult>
            <SourceIdentity>DevUser123</SourceIdentity>
            <AssumedRoleUser>
              <Arn>arn:aws:sts::123456789012:assumed-role/demo/John</Arn>
              <AssumedRoleId>ARO123EXAMPLE123:John</AssumedRoleId>
            </AssumedRoleUser>
            <Credentials>
              <SessionToken>AQoDYXdzEPT//////////wEXAMPLEtc764&amp;more</SessionToken>
              <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
              <Expiration>2019-11-09T13:34:41Z</Expiration>
              <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>
            </Credentials>
            <PackedPolicySize>8</PackedPolicySize>
          </AssumeRoleResult>
          <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
        </AssumeRoleResponse>
        """

    @Test func readsTheCredentialsAndTheirExpiry() throws {
        let fetched = try STSClient.credentials(fromXML: Array(Self.answer.utf8), action: "AssumeRole").get()
        #expect(fetched.credentials.accessKeyID == "ASIAIOSFODNN7EXAMPLE")
        #expect(fetched.credentials.secretAccessKey.exposedValue == "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY")
        #expect(fetched.credentials.sessionToken?.exposedValue == "AQoDYXdzEPT//////////wEXAMPLEtc764&more")
        #expect(fetched.expiresAtMilliseconds == 1_573_306_481_000)
    }

    @Test(arguments: [
        ("the answer to another action", answer.replacingOccurrences(of: "AssumeRoleR", with: "GetSessionTokenR")),
        (
            "no token",
            answer.replacingOccurrences(of: "<SessionToken>", with: "<Other>")
                .replacingOccurrences(of: "</SessionToken>", with: "</Other>")
        ),
        ("a bad expiry", answer.replacingOccurrences(of: "2019-11-09T13:34:41Z", with: "tomorrow")),
        ("a DOCTYPE", "<!DOCTYPE x>" + answer),
        (
            "two key ids",
            answer.replacingOccurrences(
                of: "<AccessKeyId>", with: "<AccessKeyId>A</AccessKeyId><AccessKeyId>")
        ),
        ("an unclosed element", String(answer.dropLast(25))),
    ])
    func refusesAnswersItCannotReadWithCertainty(what: String, body: String) {
        guard case .failure(let error) = STSClient.credentials(fromXML: Array(body.utf8), action: "AssumeRole") else {
            Issue.record("\(what) was accepted")
            return
        }
        #expect(error.message.hasPrefix("the STS AssumeRole answer is not readable"))
        #expect(!error.message.contains("wJalr"), "secrets never in errors")
    }

    @Test func errorAnswersAreSummarizedByCodeAndMessage() {
        let body = """
            <ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
              <Error><Type>Sender</Type><Code>AccessDenied</Code>
              <Message>User is not authorized to perform: sts:AssumeRole</Message></Error>
              <RequestId>1</RequestId>
            </ErrorResponse>
            """
        #expect(
            STSClient.errorSummary(Array(body.utf8))
                == "AccessDenied: User is not authorized to perform: sts:AssumeRole")
        #expect(STSClient.errorSummary(Array("not xml <".utf8)) == nil)
    }
}
