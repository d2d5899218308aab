import PresigndSigV4
import Testing

@testable import PresigndProxy

/// `credential_process` output (AWS CLI JSON, version 1).
@Suite struct ProcessCredentialsTests {
    static func parse(_ text: String) -> Result<FetchedCredentials, CredentialFetchError> {
        ProcessCredentials.parse(Array(text.utf8))
    }

    @Test func readsVersionOneWithExpiration() throws {
        let fetched = try Self.parse(
            #"{"Version": 1, "AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "wJalr", "SessionToken": "tok","#
                + #" "Expiration": "2026-03-01T00:15:00Z"}"#
        ).get()
        #expect(fetched.credentials.accessKeyID == "AKIDEXAMPLE")
        #expect(fetched.credentials.secretAccessKey.exposedValue == "wJalr")
        #expect(fetched.credentials.sessionToken?.exposedValue == "tok")
        #expect(fetched.expiresAtMilliseconds == 1_772_324_100_000)
        #expect(fetched.keyHint == "…MPLE")
    }

    @Test func withoutExpirationTheKeysDoNotExpire() throws {
        let fetched = try Self.parse(#"{"Version":1,"AccessKeyId":"A","SecretAccessKey":"S"}"#).get()
        #expect(fetched.expiresAtMilliseconds == nil)
        #expect(fetched.credentials.sessionToken == nil)
    }

    @Test(arguments: [
        ("not json", "not a JSON object"),
        (#"{"AccessKeyId":"A","SecretAccessKey":"S"}"#, "Version"),
        (#"{"Version":2,"AccessKeyId":"A","SecretAccessKey":"S"}"#, "Version"),
        (#"{"Version":1,"SecretAccessKey":"S"}"#, "no AccessKeyId"),
        (#"{"Version":1,"AccessKeyId":"A","SecretAccessKey":""}"#, "SecretAccessKey"),
        (#"{"Version":1,"AccessKeyId":"A","SecretAccessKey":"S","Expiration":"tomorrow"}"#, "RFC 3339"),
    ])
    func refusesMalformedOutputNamingTheFieldNotTheValue(text: String, words: String) {
        guard case .failure(let error) = Self.parse(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.message.contains(words))
        #expect(!error.message.contains("\"S\""))
    }

    @Test(arguments: [
        ("2026-03-01T00:15:00Z", 1_772_324_100), ("2026-03-01T00:15:00.123456Z", 1_772_324_100),
        ("2026-03-01T01:15:00+01:00", 1_772_324_100), ("2026-02-28T23:15:00-01:00", 1_772_324_100),
        ("2026-03-01 00:15:00z", 1_772_324_100),
    ])
    func parsesRFC3339Times(text: String, epoch: Int) {
        #expect(AmzDate(iso8601: text)?.epochSeconds == epoch)
    }

    @Test(arguments: ["2026-02-29T00:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01T00:00:00", "2026-03-01T00:00:00.Z"])
    func refusesInvalidTimes(text: String) {
        #expect(AmzDate(iso8601: text) == nil)
    }
}
