import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// Held answers in the connection's life (issue 21 §3): an error or the `200 OK` of an operation S3 may still fail
/// in its body is read whole before anything of it goes out; it ends in a retry, passed on, or passed on as far as
/// it came once held too long.
@Suite struct ConnectionStateMachineHeldAnswerTests {
    typealias Base = ConnectionStateMachineTests
    static let complete = RequestStart(route: .stream, hasBody: true)
    static let held: [ConnectionEvent] = [.requestHead(complete), .requestBodyEnded, .answerHeld(now: 1_000)]

    @Test func aHeldAnswerKeepsTheUpstreamAndSendsNothing() {
        let (machine, actions) = Base.machine(after: Self.held)
        #expect(actions.isEmpty)
        #expect(Base.exchange(machine)?.response == .holding(since: 1_000))
        #expect(machine.holdsAnswer && machine.usesUpstream)
        #expect(machine.responseFraming == nil)
    }

    @Test func aHeldAnswerIsRetriedAtOnceOnTheSameTerms() {
        let (machine, actions) = Base.machine(
            after: Self.held + [.retryUpstream(afterMilliseconds: 0, upstreamReusable: true)])
        #expect(actions == [.releaseUpstream(reusable: true), .connectUpstream(fresh: false)])
        #expect(Base.exchange(machine)?.response == .awaitingUpstream)
        #expect(Base.exchange(machine)?.attempts == 2)
        #expect(!machine.holdsAnswer)
    }

    @Test func aHeldAnswerIsRetriedAfterABackoff() {
        let (machine, actions) = Base.machine(
            after: Self.held + [.retryUpstream(afterMilliseconds: 300, upstreamReusable: false)])
        #expect(actions == [.releaseUpstream(reusable: false), .scheduleRetry(milliseconds: 300)])
        #expect(Base.exchange(machine)?.response == .backingOff)
    }

    @Test func aHeldAnswerPassedOnStreamsItsBody() {
        let (machine, actions) = Base.machine(after: Self.held + [.responseHead(Base.okWithLength)])
        #expect(actions == [.writeResponseHead(.passThrough, closing: false)])
        #expect(machine.responseFraming == .passThrough)
        let (again, retried) = Base.machine(
            after: Self.held + [
                .responseHead(Base.okWithLength), .retryUpstream(afterMilliseconds: 0, upstreamReusable: false),
            ])
        #expect(retried.isEmpty, "nothing is retried once the head went out")
        #expect(again.responseFraming == .passThrough)
    }

    @Test func anAnswerHeldTooLongIsPassedOnAsFarAsItCame() {
        var machine = ConnectionStateMachine(headerTimeoutMilliseconds: 1000, maxHoldMilliseconds: 10_000)
        for event in Self.held { _ = machine.handle(event) }
        #expect(machine.handle(.tick(now: 10_999)).isEmpty)
        #expect(machine.handle(.tick(now: 11_000)) == [.passOnHeldAnswer])
        // The driver writes what it held: the machine leaves `holding` with the head, as for any answer.
        #expect(machine.handle(.responseHead(Base.okWithLength)) == [.writeResponseHead(.passThrough, closing: false)])
        #expect(machine.handle(.tick(now: 30_000)).isEmpty)
    }

    @Test func aFailureWhileHoldingAnswersTheClientWithAnError() {
        let (machine, actions) = Base.machine(after: Self.held + [.failed(.upstreamTimeout)])
        #expect(
            actions == [
                .releaseUpstream(reusable: false), .answer(.error(.upstreamTimeout), closing: false), .readNextRequest,
            ])
        #expect(machine.state == .idle)
    }

    @Test func aClientAbortWhileHoldingDropsTheUpstream() {
        let (machine, actions) = Base.machine(after: Self.held + [.clientEnded(.aborted)])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
        #expect(machine.state == .closed)
    }

    @Test func onlyAnAnswerAwaitedIsHeld() {
        let (streaming, _) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .responseHead(Base.okWithLength), .answerHeld(now: 5),
        ])
        #expect(streaming.responseFraming == .passThrough && !streaming.holdsAnswer)
        let (backingOff, _) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .retryUpstream(afterMilliseconds: 100, upstreamReusable: false),
            .answerHeld(now: 5),
        ])
        #expect(Base.exchange(backingOff)?.response == .backingOff)
    }
}
