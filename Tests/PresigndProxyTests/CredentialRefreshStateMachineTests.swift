import PresigndSigV4
import Testing

@testable import PresigndProxy

/// The refresh schedule as a pure state machine: time and jitter are parameters, nothing sleeps.
@Suite struct CredentialRefreshStateMachineTests {
    static let hour = 3_600_000
    static let minute = 60_000

    static func fetched(_ key: String, expiresAt: Int?) -> FetchedCredentials {
        FetchedCredentials(
            credentials: Credentials(accessKeyID: key, secretAccessKey: Secret("s-" + key), sessionToken: Secret("t")),
            expiresAtMilliseconds: expiresAt)
    }

    /// The actions as comparable text.
    static func describe(_ actions: [CredentialRefreshAction]) -> [String] {
        actions.map {
            switch $0 {
            case .fetch: "fetch"
            case .publish(let fetched): "publish \(fetched.credentials.accessKeyID)"
            case .unavailable(let reason): "unavailable: \(reason)"
            case .schedule(let at): "schedule \(at)"
            }
        }
    }

    @Test func startsOneFetchAndPublishesWithARefreshAheadOfExpiry() {
        var machine = CredentialRefreshStateMachine()
        #expect(Self.describe(machine.start()) == ["fetch"])
        #expect(machine.start().isEmpty)  // single-flight
        let actions = machine.fetchSucceeded(Self.fetched("A", expiresAt: Self.hour), nowMilliseconds: 0, jitter: 0)
        // lead 5 minutes with no jitter
        #expect(Self.describe(actions) == ["publish A", "schedule \(Self.hour - 5 * Self.minute)"])
        #expect(machine.isValid(atMilliseconds: Self.hour - 1))
        #expect(!machine.isValid(atMilliseconds: Self.hour))
    }

    @Test(arguments: [(0.0, 5), (0.5, 10), (0.999, 14)])
    func jitterSpreadsTheLeadOverFiveToFifteenMinutes(jitter: Double, leadMinutes: Int) {
        let machine = CredentialRefreshStateMachine()
        let at = machine.refreshTime(now: 0, expiry: Self.hour, jitter: jitter)
        #expect((Self.hour - at) / Self.minute == leadMinutes)
    }

    @Test func shortLivedCredentialsRefreshHalfway() {
        let machine = CredentialRefreshStateMachine()
        #expect(machine.refreshTime(now: 1_000, expiry: 7_000, jitter: 0.7) == 4_000)
    }

    @Test func credentialsWithoutExpiryAreNeverRefreshed() {
        var machine = CredentialRefreshStateMachine()
        _ = machine.start()
        #expect(
            Self.describe(machine.fetchSucceeded(Self.fetched("S", expiresAt: nil), nowMilliseconds: 5, jitter: 0)) == [
                "publish S"
            ])
        #expect(machine.isValid(atMilliseconds: Int.max))
    }

    @Test func failedRefreshKeepsValidCredentialsAndRetriesWithBackoffNoLaterThanExpiry() {
        var machine = CredentialRefreshStateMachine()
        _ = machine.start()
        _ = machine.fetchSucceeded(Self.fetched("A", expiresAt: 100_000), nowMilliseconds: 0, jitter: 0)
        #expect(Self.describe(machine.timerFired(nowMilliseconds: 50_000)) == ["fetch"])
        // Retries: steps of 1 s, 2 s, 4 s, half fixed and half jittered (0.999 ≈ the full step, 0 = half)…
        #expect(
            Self.describe(machine.fetchFailed("exit 1", nowMilliseconds: 50_000, jitter: 0.999)) == ["schedule 50999"])
        _ = machine.timerFired(nowMilliseconds: 51_000)
        #expect(Self.describe(machine.fetchFailed("exit 1", nowMilliseconds: 51_000, jitter: 0)) == ["schedule 52000"])
        _ = machine.timerFired(nowMilliseconds: 52_000)
        #expect(Self.describe(machine.fetchFailed("exit 1", nowMilliseconds: 52_000, jitter: 0)) == ["schedule 54000"])
        #expect(machine.consecutiveFailures == 3)
        #expect(machine.isValid(atMilliseconds: 99_999))  // still the old keys: nothing was withdrawn
        // …capped at 30 s, and never past the expiry.
        for _ in 0..<10 { _ = machine.fetchFailed("exit 1", nowMilliseconds: 52_500, jitter: 0) }
        #expect(machine.retryDelay(jitter: 0.999) <= 30_000)
        _ = machine.timerFired(nowMilliseconds: 90_000)
        #expect(Self.describe(machine.fetchFailed("exit 1", nowMilliseconds: 90_000, jitter: 0)) == ["schedule 100000"])
    }

    @Test func expiryWithoutASuccessfulRefreshMakesTheUpstreamUnavailableWithTheReason() {
        var machine = CredentialRefreshStateMachine()
        _ = machine.start()
        _ = machine.fetchSucceeded(Self.fetched("A", expiresAt: 10_000), nowMilliseconds: 0, jitter: 0)
        _ = machine.timerFired(nowMilliseconds: 5_000)
        _ = machine.fetchFailed("credential_process exited with status 3", nowMilliseconds: 5_000, jitter: 0)
        let actions = Self.describe(machine.timerFired(nowMilliseconds: 10_000))
        #expect(actions.count == 2)
        #expect(actions[0].hasPrefix("unavailable: the credentials expired at 1970-01-01T00:00:10Z"))
        #expect(actions[0].contains("the last refresh failed: credential_process exited with status 3"))
        #expect(actions[1] == "fetch")
        // Failing again after expiry keeps them unavailable and keeps retrying.
        let again = Self.describe(machine.fetchFailed("exit 3", nowMilliseconds: 10_100, jitter: 0))
        #expect(again.first?.hasPrefix("unavailable: ") == true)
        #expect(again.last?.hasPrefix("schedule ") == true)
        // Service returns by itself when the provider works again.
        let back = Self.describe(
            machine.fetchSucceeded(Self.fetched("B", expiresAt: 30_000), nowMilliseconds: 12_000, jitter: 0))
        #expect(back == ["publish B", "schedule 21000"])
        #expect(machine.consecutiveFailures == 0)
    }

    @Test func timerDuringAFetchStartsNoSecondOneButStillReportsExpiry() {
        var machine = CredentialRefreshStateMachine()
        _ = machine.start()
        _ = machine.fetchSucceeded(Self.fetched("A", expiresAt: 10_000), nowMilliseconds: 0, jitter: 0)
        #expect(Self.describe(machine.timerFired(nowMilliseconds: 5_000)) == ["fetch"])
        #expect(machine.timerFired(nowMilliseconds: 6_000).isEmpty)
        #expect(
            Self.describe(machine.timerFired(nowMilliseconds: 10_000)).first?.contains("a refresh is under way") == true
        )
    }

    @Test func firstFetchFailingReportsWhy() {
        var machine = CredentialRefreshStateMachine()
        _ = machine.start()
        let actions = Self.describe(machine.fetchFailed("timed out after 10 s", nowMilliseconds: 0, jitter: 0))
        #expect(actions == ["unavailable: fetching credentials failed: timed out after 10 s", "schedule 500"])
    }

    @Test func alreadyExpiredCredentialsCountAsAFailure() {
        var machine = CredentialRefreshStateMachine()
        _ = machine.start()
        let actions = Self.describe(
            machine.fetchSucceeded(Self.fetched("A", expiresAt: 1_000), nowMilliseconds: 2_000, jitter: 0))
        #expect(actions.first?.contains("already expired") == true)
        #expect(machine.current == nil)
    }
}
