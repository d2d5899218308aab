import PresigndConfig
import PresigndSigV4
import Testing

@testable import PresigndProxy

/// The presign API asks the same engine as the proxy (issue 19 §6): same actions, same principals.
@Suite struct PresignServicePolicyTests {
    let service = PresignService(settings: PolicySpecSettings.settings)

    func failure(_ bucket: String, _ key: String, method: String = "GET", as principal: Principal)
        -> PresignFailure?
    {
        let request = PresignRequest(bucket: bucket, key: key, method: method)
        if case .failure(let failure) = service.presign(
            request, date: AmzDate(epochSeconds: 1_772_323_200), principal: principal)
        {
            return failure
        }
        return nil
    }

    @Test func refusesADeleteLinkOnAReadOnlyBucket() {
        let failure = failure("ro", "k", method: "DELETE", as: PolicySpecRow.user)
        #expect(failure?.status == 403 && failure?.field == "method")
        #expect(failure?.message.contains("s3:DeleteObject") == true)
    }

    @Test func refusesADeleteLinkThatDeniedActionsForbid() {
        #expect(failure("admin", "k", method: "DELETE", as: PolicySpecRow.user)?.status == 403)
        #expect(failure("admin", "k", method: "PUT", as: PolicySpecRow.user) == nil)
    }

    @Test func judgesThePrincipalByTheBucketsAllowList() {
        #expect(failure("users", "k", as: PolicySpecRow.user) == nil)
        let stranger = failure("users", "k", as: Principal(peer: .unix(uid: 4242, gid: 4242, pid: 1)))
        #expect(stranger?.status == 403 && stranger?.field == "principal")
        #expect(failure("net", "k", as: PolicySpecRow.lan) == nil)
        #expect(failure("net", "k", as: PolicySpecRow.wan)?.field == "principal")
    }

    @Test func refusesDotSegmentsInTheKey() {
        let dots = failure("rw", "a/../b", as: PolicySpecRow.user)
        #expect(dots?.status == 400 && dots?.field == "key")
        #expect(failure("rw", "a/..b", as: PolicySpecRow.user) == nil)
    }

    @Test func bindsTheKeyToThePrefixes() {
        #expect(failure("pfx", "incoming/a", method: "PUT", as: PolicySpecRow.user) == nil)
        #expect(failure("pfx", "secret/a", method: "PUT", as: PolicySpecRow.user)?.field == "key")
    }
}
