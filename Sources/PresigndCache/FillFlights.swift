import PresigndSync

/// Someone waiting for a fill (issue 23 §5): told once, from any thread, that what it waited for is written or
/// that the fill ended; it then decides again (served from the slices, or fetching itself).
public protocol FillWaiter: Sendable {
    func wake()
}

/// Single-flight for misses (issue 23 §5), per store: while one request fills part of an object, a request that
/// needs some of the bytes it is bringing waits for it instead of fetching them again. A waiter is woken as soon as
/// every slice it needs that the fill keeps is written (it then finds them, and fetches only if more is missing),
/// or when the fill ends whatever happened (its answer was not cacheable, the upstream failed, the client went
/// away): nobody waits on a fill that is over. A flight's bytes are unknown until its
/// answer's head (`announce`): meanwhile it is assumed to bring what a waiter needs (most concurrent misses of an
/// object ask for the same bytes). Pure bookkeeping under one lock; waking happens outside it.
public final class FillFlights: Sendable {
    public typealias FlightID = Int

    /// What a waiter needs: a byte range of the object (`upperBound` `Int.max`: to its end), and the layout of
    /// the stored object when it is known (then the waiter is woken slice by slice, else at the flight's end).
    public struct Need: Sendable, Equatable {
        public var bytes: Range<Int>
        public var layout: SliceLayout?

        public init(bytes: Range<Int>, layout: SliceLayout?) {
            self.bytes = bytes
            self.layout = layout
        }
    }

    struct Waiting: Sendable {
        var waiter: any FillWaiter
        var need: Need
    }

    struct Flight: Sendable {
        var id: FlightID
        /// The object's bytes the fill's answer carries, and the object's size; nil until its head.
        var bytes: Range<Int>?
        var objectSize: Int?
        /// Slices written so far.
        var written: Set<Int> = []
        var waiting: [Waiting] = []

        /// Whether the flight brings any of what `need` asks for (unknown before its head: assumed so).
        func brings(_ need: Need) -> Bool {
            guard let bytes else { return true }
            return bytes.overlaps(need.bytes)
        }

        /// Whether every slice of `need` this flight keeps is written (the waiter then decides again: a hit, or
        /// a fetch of what is still missing); false while its slices are unknown (woken at the end instead).
        func hasWritten(_ need: Need) -> Bool {
            guard let bytes, let layout = need.layout else { return false }
            let wanted = need.bytes.clamped(to: 0..<layout.objectSize)
            return layout.slices(covering: wanted).allSatisfy { index in
                let slice = layout.bytes(ofSlice: index)
                return !(bytes.lowerBound <= slice.lowerBound && slice.upperBound <= bytes.upperBound)
                    || written.contains(index)
            }
        }
    }

    /// Flights by object: keyed by its store key (`CacheKey`, hashed as one 64-bit word), not by its name (three
    /// strings hashed on every lookup); each operation finds an object's flights once and changes them in place.
    struct Table: Sendable {
        var flights: [CacheKey: [Flight]] = [:]
        var next: FlightID = 1

        /// A new flight of `key`.
        mutating func open(_ key: CacheKey) -> FlightID {
            let id = next
            next += 1
            flights[key, default: []].append(Flight(id: id))
            return id
        }
    }

    private let table = Locked(Table())

    public init() {}

    /// A request starts fetching the object of `key` (its answer not seen yet).
    public func open(_ key: CacheKey) -> FlightID {
        table.withLock { $0.open(key) }
    }

    /// The fill's answer carries `bytes` of the object, cut as `layout` says; waiters it brings nothing for are
    /// woken now (to fetch for themselves), the others learn the layout (so they are woken slice by slice, not
    /// only at the end of a long fill).
    public func announce(_ key: CacheKey, _ id: FlightID, bytes: Range<Int>, layout: SliceLayout) {
        let woken = table.withLock { table -> [Waiting] in
            guard let object = table.flights.index(forKey: key),
                let index = table.flights.values[object].firstIndex(where: { $0.id == id })
            else { return [] }
            table.flights.values[object][index].bytes = bytes
            table.flights.values[object][index].objectSize = layout.objectSize
            let flight = table.flights.values[object][index]
            var (stay, go) = flight.waiting.partitioned { flight.brings($0.need) }
            for position in stay.indices where stay[position].need.layout == nil {
                stay[position].need.layout = layout
            }
            table.flights.values[object][index].waiting = stay
            return go
        }
        for waiting in woken { waiting.waiter.wake() }
    }

    /// In one step: waits for a flight of the object of `key` that brings some of `need` (nil: it was joined), or
    /// opens a new flight for the caller to fill (its id). Without a `need` (unknowable before the answer) it always
    /// opens: no second request can slip in between a check and an open.
    public func waitOrOpen(_ key: CacheKey, for need: Need?, _ waiter: any FillWaiter) -> FlightID? {
        table.withLock { table in
            if let need, let object = table.flights.index(forKey: key),
                let index = table.flights.values[object].firstIndex(where: { $0.brings(need) && !$0.hasWritten(need) })
            {
                table.flights.values[object][index].waiting.append(Waiting(waiter: waiter, need: need))
                return nil
            }
            return table.open(key)
        }
    }

    /// Slice `index` of the object of `key` is written (by any fill): waiters of its flights who have every slice
    /// they need now are woken.
    public func written(_ key: CacheKey, index: Int) {
        let woken = table.withLock { table -> [Waiting] in
            guard let object = table.flights.index(forKey: key) else { return [] }
            var woken: [Waiting] = []
            for position in table.flights.values[object].indices {
                table.flights.values[object][position].written.insert(index)
                let flight = table.flights.values[object][position]
                guard !flight.waiting.isEmpty else { continue }
                let (stay, go) = flight.waiting.partitioned { !flight.hasWritten($0.need) }
                table.flights.values[object][position].waiting = stay
                woken += go
            }
            return woken
        }
        for waiting in woken { waiting.waiter.wake() }
    }

    /// The flight ended, whatever happened: its remaining waiters are woken.
    public func close(_ key: CacheKey, _ id: FlightID) {
        let woken = table.withLock { table -> [Waiting] in
            guard let object = table.flights.index(forKey: key),
                let index = table.flights.values[object].firstIndex(where: { $0.id == id })
            else { return [] }
            let flight = table.flights.values[object].remove(at: index)
            if table.flights.values[object].isEmpty { table.flights.remove(at: object) }
            return flight.waiting
        }
        for waiting in woken { waiting.waiter.wake() }
    }

    /// Flights under way (metrics, tests).
    public var count: Int { table.withLock { $0.flights.values.reduce(0) { $0 + $1.count } } }
}

extension Array {
    /// The elements for which `keeps` is true, and the others, each in order.
    fileprivate func partitioned(_ keeps: (Element) -> Bool) -> ([Element], [Element]) {
        var kept: [Element] = []
        var others: [Element] = []
        for element in self {
            if keeps(element) { kept.append(element) } else { others.append(element) }
        }
        return (kept, others)
    }
}
