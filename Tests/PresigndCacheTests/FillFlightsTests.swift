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

    let name = objectName("video.mp4")
    /// 1000 bytes in slices of 100.
    static let layout = SliceLayout(objectSize: 1000, sliceSize: 100)
    static func need(_ bytes: Range<Int>, layout: SliceLayout? = nil) -> FillFlights.Need {
        FillFlights.Need(bytes: bytes, layout: layout)
    }

    @Test func withoutAFlightNobodyWaits() {
        let flights = FillFlights()
        #expect(!flights.wait(name, for: Self.need(0..<10), Counter()))
    }

    @Test func beforeItsHeadAFlightIsAssumedToBringWhatIsNeededAndItsEndWakesEveryone() {
        let flights = FillFlights()
        let id = flights.open(name)
        let (first, second) = (Counter(), Counter())
        #expect(flights.wait(name, for: Self.need(0..<Int.max), first))
        #expect(flights.wait(name, for: Self.need(500..<600), second))
        #expect(!flights.wait(objectName("other"), for: Self.need(0..<1), Counter()))
        flights.close(name, id)
        #expect(first.count == 1 && second.count == 1 && flights.count == 0)
        flights.close(name, id)  // twice: nothing more
        #expect(first.count == 1)
    }

    @Test func theHeadWakesWaitersItBringsNothingForAndKeepsTheOthers() {
        let flights = FillFlights()
        let id = flights.open(name)
        let (inside, overlapping, outside) = (Counter(), Counter(), Counter())
        #expect(flights.wait(name, for: Self.need(100..<200), inside))
        #expect(flights.wait(name, for: Self.need(450..<700), overlapping))
        #expect(flights.wait(name, for: Self.need(600..<Int.max), outside))
        flights.announce(name, id, bytes: 0..<500, objectSize: 1000)
        #expect(inside.count == 0 && overlapping.count == 0 && outside.count == 1)
        // Announced: a later waiter joins only when the flight brings some of what it needs.
        #expect(flights.wait(name, for: Self.need(10..<20), Counter()))
        #expect(!flights.wait(name, for: Self.need(500..<501), Counter()))
    }

    @Test func aWaiterIsWokenOnceEverySliceItNeedsThatTheFlightKeepsIsWritten() {
        let flights = FillFlights()
        let id = flights.open(name)
        flights.announce(name, id, bytes: 0..<950, objectSize: 1000)  // keeps slices 0 to 8
        let (early, partly, unknown) = (Counter(), Counter(), Counter())
        #expect(flights.wait(name, for: Self.need(0..<250, layout: Self.layout), early))
        // Needs slices 8 and 9; the flight keeps only 8: woken once 8 is written, to fetch 9 itself.
        #expect(flights.wait(name, for: Self.need(850..<1000, layout: Self.layout), partly))
        #expect(flights.wait(name, for: Self.need(0..<1000), unknown))  // no layout: woken at the end
        for index in 0..<3 { flights.written(name, index: index) }
        #expect(early.count == 1 && partly.count == 0 && unknown.count == 0)
        flights.written(name, index: 8)
        #expect(partly.count == 1 && unknown.count == 0)
        flights.close(name, id)
        #expect(unknown.count == 1 && early.count == 1 && partly.count == 1)
    }
}
