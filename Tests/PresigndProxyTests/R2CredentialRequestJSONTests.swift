import Testing

@testable import PresigndProxy

/// The credentials API's request body: strict about members and types, defaults as `presignd mint`.
@Suite struct R2CredentialRequestJSONTests {
    static func decode(_ text: String) -> Result<R2CredentialRequest, PresignFailure> {
        R2CredentialRequestJSON.decode(Array(text.utf8))
    }

    @Test func readsEveryMemberWithDurationsAndSingleStrings() throws {
        let request = try Self.decode(
            #"{"bucket": "b", "permission": "admin-read-write", "prefixes": ["a/", "b/"], "objects": "k", "ttl": "1h"}"#
        ).get()
        #expect(request.bucket == "b" && request.permission == .adminReadWrite && request.ttlSeconds == 3600)
        #expect(request.prefixes == ["a/", "b/"] && request.objects == ["k"])
        let defaults = try Self.decode(#"{"bucket": "b", "permission": "object-read-only", "prefixes": []}"#).get()
        #expect(defaults.ttlSeconds == 900 && defaults.prefixes.isEmpty && defaults.objects.isEmpty)
    }

    @Test(arguments: [
        (#"{"permission": "object-read-only"}"#, "bucket"),
        (#"{"bucket": "b", "permission": "object-write"}"#, "permission"),
        (#"{"bucket": "b", "permission": "object-read-only", "path": "x"}"#, "path"),
        (#"{"bucket": "b", "permission": "object-read-only", "objects": 3}"#, "objects"),
        (#"{"bucket": "b", "permission": "object-read-only", "ttl": "soon"}"#, "ttl"),
        (#"{"bucket": "b", "permission": "object-read-only", "ttl": ["1h"]}"#, "ttl"),
        (#"{"bucket": "b", "permission": "object-read-only", "prefixes": ["a", {}]}"#, "prefixes"),
    ])
    func refusalsNameTheField(json: String, field: String) {
        guard case .failure(let failure) = Self.decode(json) else {
            Issue.record("accepted \(json)")
            return
        }
        #expect(failure.status == 400 && failure.field == field, "\(failure)")
    }
}
