import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// `ConnectionStateMachine`, driven event by event without sockets: one or more tests per transition.
@Suite struct ConnectionStateMachineTests {
    static let get = RequestStart(route: .stream, hasBody: false)
    static let put = RequestStart(route: .stream, hasBody: true, expectsContinue: true)
    static let okWithLength = ResponseStart(framing: .contentLength(5), isBodyless: false)
    static let denied = LocalAnswer.error(.accessDenied("read-only bucket"))

    /// A machine after the given events, with the actions of the last one.
    static func machine(after events: [ConnectionEvent]) -> (ConnectionStateMachine, [ConnectionAction]) {
        var machine = ConnectionStateMachine(headerTimeoutMilliseconds: 1000)
        var last: [ConnectionAction] = []
        for event in events { last = machine.handle(event) }
        return (machine, last)
    }

    static func exchange(_ machine: ConnectionStateMachine) -> ExchangeState? {
        if case .exchange(let exchange) = machine.state { return exchange }
        return nil
    }

    // MARK: Heads

    @Test func aNewConnectionIsIdleAndRunsTheIdleTimeout() {
        let machine = ConnectionStateMachine(headerTimeoutMilliseconds: 1000)
        #expect(machine.state == .idle)
        #expect(machine.clientReadTimeout == .idle)
        #expect(machine.wantsClientInput && machine.decodesClientInput)
    }

    @Test func partOfAHeadStartsTheHeaderTimeout() {
        let (machine, actions) = Self.machine(after: [.headBytes(now: 50)])
        #expect(machine.state == .readingHead(startedAt: 50))
        #expect(machine.clientReadTimeout == .header)
        #expect(actions.isEmpty)
    }

    @Test func aHeadDrippingPastTheHeaderTimeoutIsAnswered408AndClosed() {
        let (machine, actions) = Self.machine(after: [.headBytes(now: 0), .headBytes(now: 900), .headBytes(now: 1001)])
        #expect(actions == [.answer(.error(.requestTimeout), closing: true), .closeWhenFlushed])
        #expect(machine.state == .closingWhenFlushed)
    }

    @Test func anIdleKeepAliveConnectionTimesOutSilently() {
        let (machine, actions) = Self.machine(after: [.readTimedOut])
        #expect(actions == [.close])
        #expect(machine.state == .closed)
    }

    @Test func aPartialHeadTimingOutIsAnswered408() {
        let (_, actions) = Self.machine(after: [.headBytes(now: 0), .readTimedOut])
        #expect(actions == [.answer(.error(.requestTimeout), closing: true), .closeWhenFlushed])
    }

    @Test func aMalformedHeadIsAnsweredAndTheConnectionCloses() {
        let (machine, actions) = Self.machine(after: [.headBytes(now: 0), .failed(.badRequest("bad field"))])
        #expect(actions == [.answer(.error(.badRequest("bad field")), closing: true), .closeWhenFlushed])
        #expect(machine.state == .closingWhenFlushed)
        let (closed, last) = Self.machine(after: [.failed(.badRequest("x")), .outputFlushed])
        #expect(last == [.close])
        #expect(closed.state == .closed)
    }

    // MARK: Forwarding and keep-alive

    @Test func aBodylessGetConnectsUpstreamAndStopsDecodingOnceComplete() {
        let (machine, actions) = Self.machine(after: [.requestHead(Self.get)])
        #expect(actions == [.connectUpstream(fresh: false)])
        #expect(machine.decodesClientInput)
        let (complete, none) = Self.machine(after: [.requestHead(Self.get), .requestBodyEnded])
        #expect(none.isEmpty)
        #expect(!complete.decodesClientInput, "a pipelined request waits for this response")
        #expect(complete.wantsClientInput, "a close is still noticed")
        #expect(complete.clientReadTimeout == .none, "a long download is not an idle client")
    }

    @Test func keepAliveReuseReturnsToIdleAndPoolsTheUpstream() {
        let (machine, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .responseHead(Self.okWithLength),
            .responseEnded(upstreamReusable: true),
        ])
        #expect(actions == [.releaseUpstream(reusable: true), .endExchange(completed: true), .readNextRequest])
        #expect(machine.state == .idle)
    }

    @Test func pipelinedRequestsAreHandledOneAfterAnother() {
        var machine = ConnectionStateMachine(headerTimeoutMilliseconds: 1000)
        for _ in 0..<3 {
            #expect(machine.handle(.requestHead(Self.get)) == [.connectUpstream(fresh: false)])
            _ = machine.handle(.requestBodyEnded)
            // While the response runs a second head is not decoded.
            #expect(!machine.decodesClientInput)
            #expect(machine.handle(.requestHead(Self.get)).isEmpty, "a head is never taken mid-exchange")
            #expect(
                machine.handle(.responseHead(Self.okWithLength)) == [.writeResponseHead(.passThrough, closing: false)])
            #expect(machine.handle(.responseEnded(upstreamReusable: true)).last == .readNextRequest)
        }
    }

    @Test func aClientThatAsksToCloseGetsConnectionCloseAndIsClosedAfterTheResponse() {
        var start = Self.get
        start.keepAlive = false
        let (_, head) = Self.machine(after: [.requestHead(start), .requestBodyEnded, .responseHead(Self.okWithLength)])
        #expect(head == [.writeResponseHead(.passThrough, closing: true)])
        let (machine, end) = Self.machine(after: [
            .requestHead(start), .requestBodyEnded, .responseHead(Self.okWithLength),
            .responseEnded(upstreamReusable: true),
        ])
        #expect(end == [.releaseUpstream(reusable: true), .endExchange(completed: true), .closeWhenFlushed])
        #expect(machine.state == .closingWhenFlushed)
    }

    @Test(arguments: [BodyFraming.chunked, .untilClose])
    func anHTTP10ClientGetsALengthlessBodyCloseDelimited(framing: BodyFraming) {
        var start = Self.get
        start.isHTTP10 = true
        let (machine, actions) = Self.machine(after: [
            .requestHead(start), .requestBodyEnded, .responseHead(ResponseStart(framing: framing, isBodyless: false)),
        ])
        #expect(actions == [.writeResponseHead(.untilClose, closing: true)])
        #expect(machine.responseFraming == .untilClose)
    }

    @Test(arguments: [BodyFraming.chunked, .untilClose])
    func anHTTP11ClientGetsALengthlessBodyRechunked(framing: BodyFraming) {
        let (_, head) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded,
            .responseHead(ResponseStart(framing: framing, isBodyless: false)),
        ])
        #expect(head == [.writeResponseHead(.rechunked, closing: false)])
        let (_, end) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded,
            .responseHead(ResponseStart(framing: framing, isBodyless: false)),
            .responseEnded(upstreamReusable: false),
        ])
        #expect(end.first == .finishResponseBody)
        #expect(end.contains(.releaseUpstream(reusable: false)))
    }

    @Test func aBodylessResponsePassesThroughWhateverItsFieldsSay() {
        let (_, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded,
            .responseHead(ResponseStart(framing: .chunked, isBodyless: true)),
        ])
        #expect(actions == [.writeResponseHead(.passThrough, closing: false)])
    }

    // MARK: Uploads and Expect: 100-continue

    @Test func anAllowedUploadExpectingContinueIsInvitedThenStreamed() {
        let (machine, actions) = Self.machine(after: [.requestHead(Self.put)])
        #expect(actions == [.sendContinue, .connectUpstream(fresh: false)])
        #expect(machine.clientReadTimeout == .body)
    }

    @Test func aDeniedUploadExpectingContinueIsAnsweredWithoutContinueAndClosed() {
        var start = Self.put
        start.route = .local(Self.denied)
        let (machine, actions) = Self.machine(after: [.requestHead(start)])
        #expect(actions == [.answer(Self.denied, closing: true), .closeWhenFlushed])
        #expect(machine.state == .closingWhenFlushed)
        #expect(!machine.wantsClientInput, "the unread body is not read")
    }

    @Test func aDeniedBodylessRequestKeepsTheConnection() {
        let start = RequestStart(route: .local(Self.denied), hasBody: false)
        let (_, first) = Self.machine(after: [.requestHead(start)])
        #expect(first == [.answer(Self.denied, closing: false)])
        let (machine, next) = Self.machine(after: [.requestHead(start), .requestBodyEnded])
        #expect(next == [.readNextRequest])
        #expect(machine.state == .idle)
    }

    // MARK: Cached answers that stream their slices (issue 23 §5)

    static let large = LocalAnswer.cached(
        CachedResponse(
            head: CachedHead(status: 200, fields: [:], bytes: 0..<(40 << 20), slices: 0..<40), method: "GET",
            logPath: "/b/k", streamsBody: true))

    @Test func aLargeCachedAnswerHoldsTheNextRequestUntilItsLastSliceIsQueued() {
        let start = RequestStart(route: .local(Self.large), hasBody: false)
        let (sending, first) = Self.machine(after: [.requestHead(start), .requestBodyEnded])
        #expect(first == [])
        #expect(Self.exchange(sending)?.response == .sendingCached(afterUpstream: false))
        #expect(!sending.decodesClientInput, "a pipelined request waits for the whole answer")
        #expect(sending.wantsClientInput, "a close is still noticed")
        #expect(!sending.usesUpstream && sending.measuredBody == .response, "min_body_rate applies")
        let (done, last) = Self.machine(after: [.requestHead(start), .requestBodyEnded, .cachedBodySent])
        #expect(last == [.readNextRequest] && done.state == .idle)
    }

    @Test func aLargeCachedAnswerWritesItsHeadFirstWithTheConnectionsFate() {
        let (_, keep) = Self.machine(after: [.requestHead(RequestStart(route: .local(Self.large), hasBody: false))])
        #expect(keep == [.answer(Self.large, closing: false)])
        let closing = RequestStart(route: .local(Self.large), hasBody: false, keepAlive: false)
        let (_, first) = Self.machine(after: [.requestHead(closing)])
        #expect(first == [.answer(Self.large, closing: true)])
        let (machine, last) = Self.machine(after: [.requestHead(closing), .requestBodyEnded, .cachedBodySent])
        #expect(last == [.closeWhenFlushed] && machine.state == .closingWhenFlushed)
    }

    @Test func aLargeCachedAnswerCutShortClosesTheConnection() {
        let start = RequestStart(route: .local(Self.large), hasBody: false)
        for event in [ConnectionEvent.clientEnded(.aborted), .writeTimedOut, .failed(.internalError("evicted"))] {
            let (machine, last) = Self.machine(after: [.requestHead(start), .requestBodyEnded, event])
            #expect(machine.state == .closed && last.last == .close, "\(event)")
        }
        // Drain while it is sent: the answer finishes, then the connection closes.
        let (drained, last) = Self.machine(after: [.requestHead(start), .requestBodyEnded, .drain, .cachedBodySent])
        #expect(last == [.closeWhenFlushed] && drained.state == .closingWhenFlushed)
    }

    // A revalidation's 304 confirmed a large cached answer: the head and first slices went out as the upstream's
    // answer; the rest follows once the upstream is done.
    static let revalidated: [ConnectionEvent] = [
        .requestHead(Self.get), .requestBodyEnded, .responseHead(ResponseStart(framing: .none, isBodyless: false)),
    ]

    @Test func aRevalidatedLargeAnswerReleasesTheUpstreamThenEndsItsExchangeWithTheLastSlice() {
        let (sending, released) = Self.machine(
            after: Self.revalidated + [.revalidatedBodyFollows(upstreamReusable: true)])
        #expect(released == [.releaseUpstream(reusable: true)])
        #expect(Self.exchange(sending)?.response == .sendingCached(afterUpstream: true))
        #expect(!sending.usesUpstream && !sending.decodesClientInput, "a pipelined request waits for the answer")
        let (done, last) = Self.machine(
            after: Self.revalidated + [.revalidatedBodyFollows(upstreamReusable: true), .cachedBodySent])
        #expect(last == [.endExchange(completed: true), .readNextRequest] && done.state == .idle)
    }

    @Test func aRevalidatedLargeAnswerOfAClosingConnectionClosesAfterItsLastSlice() {
        let closing = RequestStart(route: .stream, hasBody: false, keepAlive: false)
        let events: [ConnectionEvent] = [
            .requestHead(closing), .requestBodyEnded, .responseHead(ResponseStart(framing: .none, isBodyless: false)),
            .revalidatedBodyFollows(upstreamReusable: true), .cachedBodySent,
        ]
        let (machine, last) = Self.machine(after: events)
        #expect(last == [.endExchange(completed: true), .closeWhenFlushed] && machine.state == .closingWhenFlushed)
        // Drain while its slices are sent: the answer finishes, then the connection closes.
        var drained = events
        drained.insert(.drain, at: 4)
        drained[0] = .requestHead(Self.get)
        let (draining, end) = Self.machine(after: drained)
        #expect(end == [.endExchange(completed: true), .closeWhenFlushed] && draining.state == .closingWhenFlushed)
    }

    @Test func aRevalidatedLargeAnswerCutShortEndsItsExchangeAsFailedAndCloses() {
        for event in [ConnectionEvent.clientEnded(.aborted), .writeTimedOut, .failed(.internalError("evicted"))] {
            let (machine, last) = Self.machine(
                after: Self.revalidated + [.revalidatedBodyFollows(upstreamReusable: true), event])
            #expect(last == [.endExchange(completed: false), .close] && machine.state == .closed, "\(event)")
        }
    }

    @Test func aCachedAnswerReadBelowTheMinimumRateIsCut() {
        let start = RequestStart(route: .local(Self.large), hasBody: false)
        let (sending, _) = Self.machine(after: [.requestHead(start), .requestBodyEnded])
        #expect(sending.measuredBody == .response)
        let (cut, local) = Self.machine(after: [.requestHead(start), .requestBodyEnded, .bodyTooSlow])
        #expect(local.last == .close && cut.state == .closed)
        let (revalidated, last) = Self.machine(
            after: Self.revalidated + [.revalidatedBodyFollows(upstreamReusable: true), .bodyTooSlow])
        #expect(last == [.endExchange(completed: false), .close] && revalidated.state == .closed)
    }

    @Test func theRestOfARevalidatedAnswerFollowsOnlyAPassThroughResponse() {
        // Before any head, or with a re-chunked body, there is no cached answer whose rest could follow.
        let (waiting, none) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .revalidatedBodyFollows(upstreamReusable: true),
        ])
        #expect(none == [] && Self.exchange(waiting)?.response == .awaitingUpstream)
        let chunkedHead = ResponseStart(framing: .chunked, isBodyless: false)
        let (chunked, ignored) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .responseHead(chunkedHead),
            .revalidatedBodyFollows(upstreamReusable: true),
        ])
        #expect(ignored == [] && Self.exchange(chunked)?.response == .streaming(.rechunked))
    }

    // MARK: Waiting for another request's cache fill (issue 23 §5)

    static let waiting = RequestStart(route: .awaitCache(since: 1000), hasBody: false)

    @Test func aRequestWaitingForAFillTouchesNoUpstreamAndDecodesNothingMore() {
        let (machine, actions) = Self.machine(after: [.requestHead(Self.waiting), .requestBodyEnded])
        #expect(actions == [] && Self.exchange(machine)?.response == .awaitingCache(since: 1000))
        #expect(!machine.usesUpstream && !machine.decodesClientInput && machine.wantsClientInput)
    }

    @Test func aSettledWaitIsAnsweredFromTheCacheOrGoesUpstream() {
        let hit = LocalAnswer.cached(
            CachedResponse(
                head: CachedHead(status: 200, fields: [:], bytes: 0..<10, slices: 0..<1), method: "GET", logPath: "/b/k"))
        let (served, answered) = Self.machine(after: [
            .requestHead(Self.waiting), .requestBodyEnded, .cacheSettled(.local(hit)),
        ])
        #expect(answered == [.answer(hit, closing: false), .readNextRequest] && served.state == .idle)
        let (fetching, connect) = Self.machine(after: [
            .requestHead(Self.waiting), .requestBodyEnded, .cacheSettled(.stream),
        ])
        #expect(connect == [.connectUpstream(fresh: false)])
        #expect(Self.exchange(fetching)?.response == .awaitingUpstream)
        let (large, first) = Self.machine(after: [
            .requestHead(Self.waiting), .requestBodyEnded, .cacheSettled(.local(Self.large)),
        ])
        #expect(first == [.answer(Self.large, closing: false)])
        #expect(Self.exchange(large)?.response == .sendingCached(afterUpstream: false))
        let (again, none) = Self.machine(after: [
            .requestHead(Self.waiting), .requestBodyEnded, .cacheSettled(.awaitCache(since: 1500)),
        ])
        #expect(none == [] && Self.exchange(again)?.response == .awaitingCache(since: 1000))  // from the first wait
        #expect(again.awaitsCache && !served.awaitsCache)
    }

    @Test func aWaitTooLongStopsWaitingAndAClientGoneClosesIt() {
        let limit = ConnectionStateMachine.maxCacheWaitMilliseconds
        let (_, early) = Self.machine(after: [.requestHead(Self.waiting), .requestBodyEnded, .tick(now: 1000 + limit - 1)])
        #expect(early == [])
        let (_, late) = Self.machine(after: [.requestHead(Self.waiting), .requestBodyEnded, .tick(now: 1000 + limit)])
        #expect(late == [.stopWaitingForCache])
        let (gone, closing) = Self.machine(after: [.requestHead(Self.waiting), .clientEnded(.aborted)])
        #expect(gone.state == .closed && closing.last == .close)
        // A settlement that arrives after the wait ended is ignored.
        let (idle, ignored) = Self.machine(after: [
            .requestHead(Self.waiting), .requestBodyEnded, .cacheSettled(.stream), .cacheSettled(.stream),
        ])
        #expect(ignored == [] && Self.exchange(idle)?.response == .awaitingUpstream)
    }

    @Test func aSpooledUploadIsSentOnceTheBodyIsComplete() {
        let start = RequestStart(route: .spool, hasBody: true, expectsContinue: true)
        let (spooling, first) = Self.machine(after: [.requestHead(start)])
        #expect(first == [.sendContinue])
        #expect(Self.exchange(spooling)?.request == .spooling)
        #expect(!spooling.usesUpstream)
        let (sending, next) = Self.machine(after: [.requestHead(start), .requestBodyEnded])
        #expect(next == [.sendSpooledRequest])
        #expect(sending.usesUpstream)
    }

    @Test func aSpoolFailureIsAnsweredBeforeAnyUpstream() {
        let start = RequestStart(route: .spool, hasBody: true)
        let (_, actions) = Self.machine(after: [.requestHead(start), .failed(.entityTooLarge)])
        #expect(actions == [.answer(.error(.entityTooLarge), closing: true), .closeWhenFlushed])
    }

    @Test func anUpstreamAnsweringBeforeTheBodyEndsClosesAfterTheResponse() {
        let (_, head) = Self.machine(after: [.requestHead(Self.put), .responseHead(Self.okWithLength)])
        #expect(head == [.writeResponseHead(.passThrough, closing: true)])
        let (machine, end) = Self.machine(after: [
            .requestHead(Self.put), .responseHead(Self.okWithLength), .responseEnded(upstreamReusable: true),
        ])
        #expect(end == [.releaseUpstream(reusable: false), .endExchange(completed: true), .closeWhenFlushed])
        #expect(machine.state == .closingWhenFlushed)
    }

    // MARK: Client aborts

    @Test(arguments: [ClientEnd.endOfFile, .aborted])
    func aClientGoneMidUploadAbortsTheExchange(end: ClientEnd) {
        let (machine, actions) = Self.machine(after: [.requestHead(Self.put), .clientEnded(end)])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
        #expect(machine.state == .closed)
    }

    @Test func aHalfCloseAfterACompleteRequestIsStillAnswered() {
        let (machine, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .clientEnded(.endOfFile),
        ])
        #expect(actions.isEmpty)
        #expect(!machine.wantsClientInput)
        let (_, end) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .clientEnded(.endOfFile), .responseHead(Self.okWithLength),
            .responseEnded(upstreamReusable: true),
        ])
        #expect(end.last == .closeWhenFlushed)
    }

    @Test func aClientResetAfterACompleteRequestAbortsTheResponse() {
        let (_, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .responseHead(Self.okWithLength), .clientEnded(.aborted),
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
    }

    @Test func anIdleClientClosingJustCloses() {
        let (machine, actions) = Self.machine(after: [.clientEnded(.endOfFile)])
        #expect(actions == [.close])
        #expect(machine.state == .closed)
    }

    @Test func aStalledUploadBodyTimesOutAndCloses() {
        let (_, actions) = Self.machine(after: [.requestHead(Self.put), .readTimedOut])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
    }

    // MARK: Upstream failures

    @Test func aStalePooledConnectionIsRetriedOnceOnAFreshOne() {
        let (machine, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .upstreamFailed(.upstreamProtocol("closed"), retryable: true),
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .connectUpstream(fresh: true)])
        #expect(Self.exchange(machine)?.attempts == 2)
        let (_, second) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .upstreamFailed(.upstreamProtocol("closed"), retryable: true),
            .upstreamFailed(.upstreamProtocol("closed"), retryable: true),
        ])
        #expect(
            second == [
                .releaseUpstream(reusable: false), .answer(.error(.upstreamProtocol("closed")), closing: false),
                .readNextRequest,
            ])
    }

    @Test func anUpstreamFailureBeforeTheResponseIsAnS3ErrorAndTheConnectionStays() {
        let (machine, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .upstreamFailed(.upstreamTimeout, retryable: false),
        ])
        #expect(
            actions == [
                .releaseUpstream(reusable: false), .answer(.error(.upstreamTimeout), closing: false), .readNextRequest,
            ])
        #expect(machine.state == .idle)
    }

    @Test func anUpstreamFailureMidUploadIsAnsweredAndCloses() {
        let (_, actions) = Self.machine(after: [
            .requestHead(Self.put), .upstreamFailed(.upstreamConnect("refused"), retryable: false),
        ])
        #expect(
            actions == [
                .releaseUpstream(reusable: false), .answer(.error(.upstreamConnect("refused")), closing: true),
                .closeWhenFlushed,
            ])
    }

    @Test func anUpstreamResetMidBodyClosesTheClientWhoseFramingShowsTheCut() {
        let (machine, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .responseHead(Self.okWithLength),
            .upstreamFailed(.upstreamProtocol("reset"), retryable: false),
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
        #expect(machine.state == .closed)
    }

    @Test func anUpstreamResetMidCloseDelimitedBodyResetsAnHTTP10Client() {
        var start = Self.get
        start.isHTTP10 = true
        let (_, actions) = Self.machine(after: [
            .requestHead(start), .requestBodyEnded,
            .responseHead(ResponseStart(framing: .untilClose, isBodyless: false)),
            .upstreamFailed(.upstreamProtocol("reset"), retryable: false),
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .reset])
    }

    @Test func aMalformedResponseAfterTheHeadAbortsTheClient() {
        let (_, actions) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded,
            .responseHead(ResponseStart(framing: .chunked, isBodyless: false)),
            .failed(.upstreamProtocol("bad chunk")),
        ])
        #expect(actions == [.releaseUpstream(reusable: false), .endExchange(completed: false), .close])
    }

    // MARK: Write timeout (bug a)

    @Test func aWriteTimeoutWithTheHeadPendingClosesInsteadOfAnswering408Forever() {
        for events in [
            [ConnectionEvent.headBytes(now: 0)],
            [.requestHead(Self.get), .requestBodyEnded],
            [.requestHead(Self.get), .requestBodyEnded, .responseHead(Self.okWithLength)],
            [.failed(.badRequest("x"))],
        ] {
            let (machine, actions) = Self.machine(after: events + [.writeTimedOut])
            #expect(actions.last == .close, "\(events)")
            #expect(!actions.contains { if case .answer = $0 { true } else { false } }, "\(events)")
            #expect(machine.state == .closed)
            var closed = machine
            #expect(closed.handle(.writeTimedOut).isEmpty, "nothing re-arms once closed")
        }
    }

    // MARK: Drain and reload

    @Test func drainClosesAnIdleConnectionAtOnce() {
        let (machine, actions) = Self.machine(after: [.drain])
        #expect(actions == [.close])
        #expect(machine.state == .closed)
    }

    @Test func drainLetsTheExchangeInFlightFinishThenCloses() {
        let (_, none) = Self.machine(after: [.requestHead(Self.get), .requestBodyEnded, .drain])
        #expect(none.isEmpty)
        let (_, head) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .drain, .responseHead(Self.okWithLength),
        ])
        #expect(head == [.writeResponseHead(.passThrough, closing: true)])
        let (machine, end) = Self.machine(after: [
            .requestHead(Self.get), .requestBodyEnded, .drain, .responseHead(Self.okWithLength),
            .responseEnded(upstreamReusable: true),
        ])
        #expect(end.last == .closeWhenFlushed)
        #expect(machine.state == .closingWhenFlushed)
    }

    @Test func aReloadBetweenRequestsChangesTheHeaderTimeoutOfTheNextHead() {
        var machine = ConnectionStateMachine(headerTimeoutMilliseconds: 10_000)
        _ = machine.handle(.requestHead(Self.get))
        _ = machine.handle(.requestBodyEnded)
        _ = machine.handle(.responseHead(Self.okWithLength))
        _ = machine.handle(.responseEnded(upstreamReusable: true))
        machine.headerTimeoutMilliseconds = 100  // what the driver does when it applies a reload at idle
        _ = machine.handle(.headBytes(now: 0))
        #expect(
            machine.handle(.headBytes(now: 101)) == [
                .answer(.error(.requestTimeout), closing: true), .closeWhenFlushed,
            ])
    }

    @Test func eventsAfterCloseDoNothing() {
        var (machine, _) = Self.machine(after: [.clientEnded(.aborted)])
        for event in [
            ConnectionEvent.requestHead(Self.get), .requestBodyEnded, .responseHead(Self.okWithLength),
            .responseEnded(upstreamReusable: true), .readTimedOut, .writeTimedOut, .outputFlushed, .drain,
            .failed(.requestTimeout), .clientEnded(.aborted),
        ] {
            #expect(machine.handle(event).isEmpty, "\(event)")
            #expect(machine.state == .closed)
        }
    }
}
