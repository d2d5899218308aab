import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// The machine's slow-peer events (issue 20): the head's absolute deadline and `min_body_rate`.
@Suite struct ConnectionStateMachineLimitsTests {
    typealias Base = ConnectionStateMachineTests

    @Test func aHeadPastItsDeadlineIsCutByTheSweepEvenWithoutAnotherByte() {
        let (machine, actions) = Base.machine(after: [.headBytes(now: 0), .tick(now: 1001)])
        #expect(actions == [.answer(.error(.requestTimeout), closing: true), .closeWhenFlushed])
        #expect(machine.state == .closingWhenFlushed)
    }

    @Test func aTickWithinTheDeadlineOrBetweenRequestsChangesNothing() {
        let (reading, early) = Base.machine(after: [.headBytes(now: 0), .tick(now: 999)])
        #expect(early.isEmpty && reading.state == .readingHead(startedAt: 0))
        let (idle, actions) = Base.machine(after: [.tick(now: 50_000)])
        #expect(actions.isEmpty && idle.state == .idle)
    }

    @Test func aStreamedRequestBodyTooSlowDropsTheUpstreamAndIsAnswered408() {
        let (machine, actions) = Base.machine(after: [.requestHead(Base.put), .bodyTooSlow])
        #expect(
            actions == [
                .releaseUpstream(reusable: false), .answer(.error(.bodyTooSlow), closing: true), .closeWhenFlushed,
            ])
        #expect(machine.state == .closingWhenFlushed)
    }

    @Test func aSpooledRequestBodyTooSlowIsAnswered408WithNoUpstreamToDrop() {
        let spool = RequestStart(route: .spool, hasBody: true)
        let (_, actions) = Base.machine(after: [.requestHead(spool), .bodyTooSlow])
        #expect(actions == [.answer(.error(.bodyTooSlow), closing: true), .closeWhenFlushed])
    }

    @Test func aResponseTooSlowIsCutLikeAnyResponseCutShort() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .responseHead(Base.okWithLength), .bodyTooSlow,
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
        #expect(machine.state == .closed)
    }

    @Test func theMeasuredBodyIsTheRequestWhileReadThenTheResponseWhileItStreams() {
        #expect(Base.machine(after: []).0.measuredBody == nil)
        #expect(Base.machine(after: [.requestHead(Base.put)]).0.measuredBody == .request)
        #expect(Base.machine(after: [.requestHead(Base.get), .requestBodyEnded]).0.measuredBody == nil)
        let streaming = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .responseHead(Base.okWithLength),
        ])
        #expect(streaming.0.measuredBody == .response)
    }

    @Test func aSlowBodyAfterTheExchangeEndedIsIgnored() {
        let (machine, actions) = Base.machine(after: [
            .requestHead(Base.get), .requestBodyEnded, .responseHead(Base.okWithLength),
            .responseEnded(upstreamReusable: true), .bodyTooSlow,
        ])
        #expect(actions.isEmpty && machine.state == .idle)
    }
}

@Suite struct BodyRateMeterTests {
    /// One sample (`#expect` cannot call a mutating method itself).
    static func sample(
        _ meter: inout BodyRateMeter, _ body: MeasuredBody, bytes: Int, now: Int, rate: Int = 1000
    ) -> Bool {
        meter.isTooSlow(body, bytes: bytes, now: now, bytesPerSecond: rate, windowMilliseconds: 1000)
    }

    @Test func aBodyBelowTheRateOverAWholeWindowIsTooSlow() {
        var meter = BodyRateMeter()
        // 1 KiB/s over 1 s windows: 500 bytes in the first second is too slow, not before the window closes.
        let first = Self.sample(&meter, .request, bytes: 0, now: 0, rate: 1024)
        let early = Self.sample(&meter, .request, bytes: 400, now: 500, rate: 1024)
        let closed = Self.sample(&meter, .request, bytes: 500, now: 1000, rate: 1024)
        #expect(!first && !early && closed)
    }

    @Test func eachWindowIsJudgedOnItsOwn() {
        var meter = BodyRateMeter()
        let first = Self.sample(&meter, .request, bytes: 0, now: 0)
        let fast = Self.sample(&meter, .request, bytes: 5000, now: 1000)
        // 5000 bytes in the first second do not pay for an idle second.
        let idle = Self.sample(&meter, .request, bytes: 5000, now: 2000)
        #expect(!first && !fast && idle)
    }

    @Test func aChangeOfBodyOrARestartBeginsANewWindow() {
        var meter = BodyRateMeter()
        let request = Self.sample(&meter, .request, bytes: 0, now: 0)
        let switched = Self.sample(&meter, .response, bytes: 0, now: 1500)
        meter.restart()
        let restarted = Self.sample(&meter, .response, bytes: 0, now: 3000)
        let judged = Self.sample(&meter, .response, bytes: 0, now: 4000)
        #expect(!request && !switched && !restarted && judged)
    }

    @Test func aRateOfZeroNeverCuts() {
        var meter = BodyRateMeter()
        var cuts = 0
        for now in stride(from: 0, through: 10_000, by: 500)
        where Self.sample(&meter, .request, bytes: 0, now: now, rate: 0) {
            cuts += 1
        }
        #expect(cuts == 0)
    }
}
