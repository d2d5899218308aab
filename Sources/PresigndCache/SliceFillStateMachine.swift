/// Single-flight for one slice (issue 23 §5): the first miss fetches, later misses wait and stream from the fill,
/// a failure wakes every waiter with the error, a new version mid-fill abandons it. Pure; `Waiter` is whatever
/// the caller wakes (a connection id and its worker).
public struct SliceFillStateMachine<Waiter: Hashable & Sendable>: Sendable {
    /// A fill's number: events of an abandoned or finished fill carry an old one and are ignored.
    public typealias FillID = Int

    public enum State: Sendable, Equatable {
        /// Not stored and nobody fetching it.
        case absent
        /// One upstream fetch under way for `version`; `received` bytes are written (readable by waiters);
        /// `waiters` get told about each step.
        case filling(fill: FillID, version: ObjectVersion, received: Int, waiters: [Waiter])
        /// Stored whole and marked present: served from disk.
        case present
        /// The last fill failed; the next request starts a new one.
        case failed(CacheFillError)
    }

    public enum Event: Sendable, Equatable {
        /// A client needs the slice of `version`.
        case request(Waiter, version: ObjectVersion)
        /// The fill wrote `count` more bytes.
        case bytesArrived(fill: FillID, count: Int)
        /// The fill wrote the whole slice and the store marked it present.
        case fillDone(fill: FillID)
        case fillFailed(fill: FillID, CacheFillError)
        /// The upstream answered the fill with another version (a new ETag): the object changed mid-fill.
        case versionChanged(fill: FillID, to: ObjectVersion)
        /// A waiter went away (client closed).
        case cancel(Waiter)
    }

    public enum Action: Sendable, Equatable {
        case none
        /// Start fill `fill`: fetch the slice upstream (aligned `Range`), write it, report its events. The
        /// requester gets the bytes as they arrive, like every waiter.
        case startFill(fill: FillID, version: ObjectVersion, for: Waiter)
        /// Wait: `available` bytes of the fill can be read now; more come with `.wake`.
        case wait(available: Int)
        /// Serve from the store.
        case serve
        /// `available` bytes (all of them when `isComplete`) can be read by these waiters.
        case wake([Waiter], available: Int, isComplete: Bool)
        /// These waiters get the error and stop waiting (a 502 before their answer started, a cut after).
        case fail([Waiter], CacheFillError)
        /// Stop the fill (drop its upstream fetch and its partial file), then fail its waiters.
        case abandon(fill: FillID, failing: [Waiter])
    }

    public private(set) var state: State
    private var nextFill: FillID

    /// A slice the store already holds starts `present`.
    public init(isPresent: Bool = false, firstFill: FillID = 1) {
        state = isPresent ? .present : .absent
        nextFill = firstFill
    }

    public mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.present, .request):
            return .serve
        case (.absent, .request(let waiter, let version)), (.failed, .request(let waiter, let version)):
            let fill = nextFill
            nextFill += 1
            state = .filling(fill: fill, version: version, received: 0, waiters: [waiter])
            return .startFill(fill: fill, version: version, for: waiter)
        case (.filling(let fill, let version, let received, var waiters), .request(let waiter, let asked)):
            guard asked == version else {
                // A client already knows a newer version than the fill fetches: the fill is of the past.
                state = .absent
                return .abandon(fill: fill, failing: waiters)
            }
            if !waiters.contains(waiter) { waiters.append(waiter) }
            state = .filling(fill: fill, version: version, received: received, waiters: waiters)
            return .wait(available: received)
        case (.filling(let fill, let version, let received, let waiters), .bytesArrived(let reported, let count))
        where reported == fill:
            state = .filling(fill: fill, version: version, received: received + count, waiters: waiters)
            return .wake(waiters, available: received + count, isComplete: false)
        case (.filling(let fill, _, let received, let waiters), .fillDone(let reported)) where reported == fill:
            state = .present
            return .wake(waiters, available: received, isComplete: true)
        case (.filling(let fill, _, _, let waiters), .fillFailed(let reported, let error)) where reported == fill:
            state = .failed(error)
            return .fail(waiters, error)
        case (.filling(let fill, _, _, let waiters), .versionChanged(let reported, _)) where reported == fill:
            state = .absent
            return .abandon(fill: fill, failing: waiters)
        case (.filling(let fill, let version, let received, var waiters), .cancel(let waiter)):
            waiters.removeAll { $0 == waiter }
            // The fill goes on without waiters: the slice is still worth storing for the next reader.
            state = .filling(fill: fill, version: version, received: received, waiters: waiters)
            return .none
        case (_, .bytesArrived), (_, .fillDone), (_, .fillFailed), (_, .versionChanged), (_, .cancel):
            return .none  // a stale fill's late report, or a waiter already woken
        }
    }
}

/// Why a fill failed, as its waiters learn it.
public enum CacheFillError: Error, Sendable, Equatable {
    /// The upstream answered with this status instead of the slice.
    case upstreamStatus(Int)
    /// The upstream connection failed or was cut before the slice was whole.
    case upstreamFailed
    /// Writing the slice failed (the `CacheError` description).
    case store(String)
    /// The object changed upstream while the slice was fetched.
    case objectChanged
}
