import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// Retries in the connection's life (issue 21 §3): only before a response head went to the client, with the
/// backoff as a state of its own.
@Suite struct ConnectionStateMachineRetryTests {
    typealias Base = ConnectionStateMachineTests

    @Test func aRetryWithoutDelayConnectsAgainAtOnce() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .retryUpstream(afterMilliseconds: 0, upstreamReusable: true),
        ])
        #expect(actions == [.releaseUpstream(reusable: true), .connectUpstream(fresh: false)])
        #expect(Base.exchange(machine)?.response == .awaitingUpstream)
        #expect(Base.exchange(machine)?.attempts == 2)
    }

    @Test func aRetryWithADelayBacksOffWithoutAnUpstream() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .retryUpstream(afterMilliseconds: 250, upstreamReusable: false),
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .scheduleRetry(milliseconds: 250)])
        #expect(Base.exchange(machine)?.response == .backingOff)
        #expect(!machine.usesUpstream)
    }

    @Test func theTimerStartsTheNextAttempt() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .retryUpstream(afterMilliseconds: 250, upstreamReusable: false),
            .retryDue,
        ])
        #expect(actions == [.connectUpstream(fresh: false)])
        #expect(Base.exchange(machine)?.response == .awaitingUpstream)
    }

    @Test func noRetryOnceTheResponseHeadWentOut() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .responseHead(Base.okWithLength),
            .retryUpstream(afterMilliseconds: 0, upstreamReusable: false),
        ])
        #expect(actions.isEmpty)
        #expect(machine.responseFraming == .passThrough)
    }

    @Test func aStaleTimerIsIgnored() {
        let (machine, actions) = Base.machine(after: [.requestHead(Base.get), .requestBodyEnded, .retryDue])
        #expect(actions.isEmpty)
        #expect(Base.exchange(machine)?.response == .awaitingUpstream)
    }

    @Test func bodyBytesWaitWhileBackingOff() {
        let (machine, _) = Base.machine(after: [
            .requestHead(Base.put), .retryUpstream(afterMilliseconds: 100, upstreamReusable: false),
        ])
        #expect(!machine.decodesClientInput)
        #expect(machine.wantsClientInput)
        let (resumed, _) = Base.machine(after: [
            .requestHead(Base.put), .retryUpstream(afterMilliseconds: 100, upstreamReusable: false), .retryDue,
        ])
        #expect(resumed.decodesClientInput)
    }

    @Test func aClientAbortWhileBackingOffEndsTheExchange() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .retryUpstream(afterMilliseconds: 100, upstreamReusable: false),
            .clientEnded(.aborted),
        ])
        #expect(machine.state == .closed)
        #expect(actions.contains(.endExchange(completed: false)))
        #expect(actions.last == .close)
    }

    @Test func aFailureWhileBackingOffIsAnsweredAsAnS3Error() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .retryUpstream(afterMilliseconds: 100, upstreamReusable: false),
            .failed(.internalError("signing failed")),
        ])
        #expect(machine.state == .idle)
        #expect(actions.contains(.answer(.error(.internalError("signing failed")), closing: false)))
    }
}
