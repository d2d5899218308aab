import PresigndSigV4
import Testing

@testable import PresigndProxy

/// What a worker signs an upstream's requests with: configured keys, or the refreshed ones, or nothing and why.
@Suite struct UpstreamTargetSignerTests {
    static func target(refreshes: Bool) -> UpstreamTarget {
        var target = UpstreamTarget(
            name: "store", usesTLS: true, host: "store.example", port: 443, hostHeader: "store.example",
            region: "us-east-1", credentials: Credentials(accessKeyID: "", secretAccessKey: Secret("")), tls: nil)
        target.refreshesCredentials = refreshes
        return target
    }

    static func presignedURL(_ signer: Signer?) throws -> String {
        let signer = try #require(signer)
        return try signer.presign(
            method: "GET", host: "store.example", path: "/data/key", query: [], headers: [], expires: 60,
            date: AmzDate(epochSeconds: 1_772_323_200), scheme: "https"
        ).url
    }

    @Test func refreshedCredentialsSignWithTheirSessionToken() throws {
        let fetched = Credentials(
            accessKeyID: "AKIDFRESH", secretAccessKey: Secret("fresh"), sessionToken: Secret("session/token"))
        let made = Self.target(refreshes: true).makeSigner(fetched: .valid(fetched, expiresAtMilliseconds: nil))
        #expect(made.problem == nil)
        let url = try Self.presignedURL(made.signer)
        #expect(url.contains("X-Amz-Credential=AKIDFRESH%2F20260301%2Fus-east-1%2Fs3%2Faws4_request"))
        #expect(url.contains("X-Amz-Security-Token=session%2Ftoken"))
    }

    @Test func unavailableOrUnfetchedCredentialsGiveNoSignerAndTheReason() {
        let target = Self.target(refreshes: true)
        let down = target.makeSigner(fetched: .unavailable("the credentials expired at 2026-03-01T00:00:00Z"))
        #expect(down.signer == nil && down.problem == "the credentials expired at 2026-03-01T00:00:00Z")
        let unfetched = target.makeSigner(fetched: nil)
        #expect(unfetched.signer == nil && unfetched.problem == "its credentials have not been fetched yet")
    }

    @Test func staticUpstreamsIgnorePublishedCredentials() throws {
        var target = Self.target(refreshes: false)
        target.credentials = Credentials(accessKeyID: "AKIDSTATIC", secretAccessKey: Secret("s"))
        let made = target.makeSigner(fetched: .unavailable("irrelevant"))
        #expect(made.problem == nil)
        #expect(try Self.presignedURL(made.signer).contains("X-Amz-Credential=AKIDSTATIC%2F"))
    }
}
