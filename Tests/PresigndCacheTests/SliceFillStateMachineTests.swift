import PresigndCache
import Testing

/// Single-flight for one slice (issue 23 §5), event by event.
@Suite struct SliceFillStateMachineTests {
    typealias Machine = SliceFillStateMachine<String>
    private let v1 = ObjectVersion(etag: "\"1\"")
    private let v2 = ObjectVersion(etag: "\"2\"")

    @Test func firstMissStartsOneFillAndLaterMissesWait() {
        var machine = Machine()
        #expect(machine.handle(.request("a", version: v1)) == .startFill(fill: 1, version: v1, for: "a"))
        #expect(machine.handle(.request("b", version: v1)) == .wait(available: 0))
        #expect(
            machine.handle(.bytesArrived(fill: 1, count: 100)) == .wake(["a", "b"], available: 100, isComplete: false))
        // A late waiter can read what is written already.
        #expect(machine.handle(.request("c", version: v1)) == .wait(available: 100))
        #expect(
            machine.handle(.bytesArrived(fill: 1, count: 50))
                == .wake(["a", "b", "c"], available: 150, isComplete: false))
        #expect(machine.handle(.fillDone(fill: 1)) == .wake(["a", "b", "c"], available: 150, isComplete: true))
        #expect(machine.state == .present)
        #expect(machine.handle(.request("d", version: v1)) == .serve)
    }

    @Test func aWaiterAskingTwiceIsListedOnce() {
        var machine = Machine()
        _ = machine.handle(.request("a", version: v1))
        _ = machine.handle(.request("a", version: v1))
        #expect(machine.handle(.fillDone(fill: 1)) == .wake(["a"], available: 0, isComplete: true))
    }

    @Test func aFailedFillWakesEveryWaiterWithTheError() {
        var machine = Machine()
        _ = machine.handle(.request("a", version: v1))
        _ = machine.handle(.request("b", version: v1))
        #expect(machine.handle(.fillFailed(fill: 1, .upstreamStatus(503))) == .fail(["a", "b"], .upstreamStatus(503)))
        #expect(machine.state == .failed(.upstreamStatus(503)))
        // Nobody is left waiting, and the next request tries again with a new fill.
        #expect(machine.handle(.request("c", version: v1)) == .startFill(fill: 2, version: v1, for: "c"))
    }

    @Test func aNewETagMidFillAbandonsItAndFailsItsWaiters() {
        var machine = Machine()
        _ = machine.handle(.request("a", version: v1))
        _ = machine.handle(.request("b", version: v1))
        #expect(machine.handle(.versionChanged(fill: 1, to: v2)) == .abandon(fill: 1, failing: ["a", "b"]))
        #expect(machine.state == .absent)
        // The abandoned fill's late reports change nothing.
        #expect(machine.handle(.bytesArrived(fill: 1, count: 10)) == .none)
        #expect(machine.handle(.fillDone(fill: 1)) == .none)
        #expect(machine.state == .absent)
        #expect(machine.handle(.request("c", version: v2)) == .startFill(fill: 2, version: v2, for: "c"))
    }

    @Test func aRequestForANewerVersionAbandonsTheOldFill() {
        var machine = Machine()
        _ = machine.handle(.request("a", version: v1))
        #expect(machine.handle(.request("b", version: v2)) == .abandon(fill: 1, failing: ["a"]))
        #expect(machine.handle(.request("b", version: v2)) == .startFill(fill: 2, version: v2, for: "b"))
    }

    @Test func aCancelledWaiterIsNotWokenAndTheFillGoesOn() {
        var machine = Machine()
        _ = machine.handle(.request("a", version: v1))
        _ = machine.handle(.request("b", version: v1))
        #expect(machine.handle(.cancel("a")) == .none)
        #expect(machine.handle(.bytesArrived(fill: 1, count: 5)) == .wake(["b"], available: 5, isComplete: false))
        #expect(machine.handle(.cancel("b")) == .none)
        #expect(machine.handle(.fillDone(fill: 1)) == .wake([], available: 5, isComplete: true))
        #expect(machine.state == .present)
    }

    @Test func reportsOfAnotherFillAreIgnored() {
        var machine = Machine(firstFill: 7)
        _ = machine.handle(.request("a", version: v1))
        #expect(machine.handle(.fillDone(fill: 6)) == .none)
        #expect(machine.handle(.fillFailed(fill: 8, .upstreamFailed)) == .none)
        #expect(machine.state == .filling(fill: 7, version: v1, received: 0, waiters: ["a"]))
    }

    @Test func aPresentSliceIsServedWithoutAFill() {
        var machine = Machine(isPresent: true)
        #expect(machine.handle(.request("a", version: v1)) == .serve)
        #expect(machine.handle(.fillDone(fill: 1)) == .none)
    }
}

/// The shared table of fills: one machine per slice while it is filled, fill numbers never reused.
@Suite struct SliceFlightsTests {
    private let v1 = ObjectVersion(etag: "\"1\"")

    @Test func concurrentMissesOfOneSliceMakeOneFillAndTheTableEmptiesAfter() throws {
        let flights = SliceFlights<Int>()
        let slice = SliceID(key: try CacheKey(objectName("k")), index: 3)
        let other = SliceID(key: slice.key, index: 4)
        #expect(flights.handle(slice, .request(1, version: v1)) == .startFill(fill: 1, version: v1, for: 1))
        #expect(flights.handle(slice, .request(2, version: v1)) == .wait(available: 0))
        #expect(flights.handle(other, .request(3, version: v1)) == .startFill(fill: 2, version: v1, for: 3))
        #expect(flights.fillsInProgress == 2)
        #expect(flights.handle(slice, .fillDone(fill: 1)) == .wake([1, 2], available: 0, isComplete: true))
        #expect(flights.handle(other, .fillFailed(fill: 2, .upstreamFailed)) == .fail([3], .upstreamFailed))
        #expect(flights.fillsInProgress == 0)
        // Late reports of finished fills find nothing; the next miss gets a new fill number.
        #expect(flights.handle(slice, .bytesArrived(fill: 1, count: 5)) == .none)
        #expect(flights.handle(other, .request(4, version: v1)) == .startFill(fill: 3, version: v1, for: 4))
    }

    @Test func aPresentSliceIsServedAndLeavesNoEntry() throws {
        let flights = SliceFlights<Int>()
        let slice = SliceID(key: try CacheKey(objectName("k")), index: 0)
        #expect(flights.handle(slice, .request(1, version: v1), isPresent: true) == .serve)
        #expect(flights.fillsInProgress == 0)
    }
}
