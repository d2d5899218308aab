import PresigndCache
import Synchronization
import Testing

/// Single-flight for misses (issue 23 §5): who waits for whose fill, and when they are woken.
@Suite struct FillFlightsTests {
    /// Counts its wakes.
    final class Counter: FillWaiter {
        let wakes = Atomic<Int>(0)
        func wake() { wakes.add(1, ordering: .relaxed) }
        var count: Int { wakes.load(ordering: .relaxed) }
    }

    /// The store key of the object the flights fill.
    let key: CacheKey

    init() throws { key = try SliceStore.key(objectName("video.mp4")) }
    /// 1000 bytes in slices of 100.
    static let layout = SliceLayout(objectSize: 1000, sliceSize: 100)
    static func need(_ bytes: Range<Int>, layout: SliceLayout? = nil) -> FillFlights.Need {
        FillFlights.Need(bytes: bytes, layout: layout)
    }

    @Test func withoutAFlightTheCallerOpensOneAndWithoutANeedNobodyWaits() {
        let flights = FillFlights()
        let first = flights.waitOrOpen(key, for: Self.need(0..<10), Counter())
        #expect(first != nil && flights.count == 1)
        // A suffix range of an object of unknown size cannot be matched: it fetches for itself.
        #expect(flights.waitOrOpen(key, for: nil, Counter()) != nil && flights.count == 2)
    }

    @Test func beforeItsHeadAFlightIsAssumedToBringWhatIsNeededAndItsEndWakesEveryone() throws {
        let flights = FillFlights()
        let id = flights.open(key)
        let (first, second) = (Counter(), Counter())
        #expect(flights.waitOrOpen(key, for: Self.need(0..<Int.max), first) == nil)
        #expect(flights.waitOrOpen(key, for: Self.need(500..<600), second) == nil)
        #expect(flights.waitOrOpen(try SliceStore.key(objectName("other")), for: Self.need(0..<1), Counter()) != nil)
        flights.close(key, id)
        #expect(first.count == 1 && second.count == 1 && flights.count == 1)  // "other"'s own flight
        flights.close(key, id)  // twice: nothing more
        #expect(first.count == 1)
    }

    @Test func theHeadWakesWaitersItBringsNothingForAndKeepsTheOthers() {
        let flights = FillFlights()
        let id = flights.open(key)
        let (inside, overlapping, outside) = (Counter(), Counter(), Counter())
        #expect(flights.waitOrOpen(key, for: Self.need(100..<200), inside) == nil)  // no layout yet
        #expect(flights.waitOrOpen(key, for: Self.need(450..<700), overlapping) == nil)
        #expect(flights.waitOrOpen(key, for: Self.need(600..<Int.max), outside) == nil)
        flights.announce(key, id, bytes: 0..<500, layout: Self.layout)
        #expect(inside.count == 0 && overlapping.count == 0 && outside.count == 1)
        // Waiters from before the head learned its layout: woken once their slices are written.
        flights.written(key, index: 1)
        #expect(inside.count == 1 && overlapping.count == 0)
        // Announced: a later waiter joins only when the flight brings some of what it needs.
        #expect(flights.waitOrOpen(key, for: Self.need(10..<20), Counter()) == nil)
        #expect(flights.waitOrOpen(key, for: Self.need(500..<501), Counter()) != nil)
    }

    @Test func aWaiterIsWokenOnceEverySliceItNeedsThatTheFlightKeepsIsWritten() {
        let flights = FillFlights()
        let id = flights.open(key)
        flights.announce(key, id, bytes: 0..<950, layout: Self.layout)  // keeps slices 0 to 8
        let (early, partly, unknown) = (Counter(), Counter(), Counter())
        #expect(flights.waitOrOpen(key, for: Self.need(0..<250, layout: Self.layout), early) == nil)
        // Needs slices 8 and 9; the flight keeps only 8: woken once 8 is written, to fetch 9 itself.
        #expect(flights.waitOrOpen(key, for: Self.need(850..<1000, layout: Self.layout), partly) == nil)
        // No layout (joined before the head, or an unknown object): learns the flight's, woken when 0..8 are in.
        #expect(flights.waitOrOpen(key, for: Self.need(0..<1000), unknown) == nil)
        for index in 0..<3 { flights.written(key, index: index) }
        #expect(early.count == 1 && partly.count == 0 && unknown.count == 0)
        flights.written(key, index: 8)
        #expect(partly.count == 1 && unknown.count == 0)
        for index in 3..<8 { flights.written(key, index: index) }
        #expect(unknown.count == 0)  // it joined after the head: no layout until the end
        flights.close(key, id)
        #expect(unknown.count == 1 && early.count == 1 && partly.count == 1)
    }
}
