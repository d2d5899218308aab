import PresigndCache
import PresigndSync
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Filled slices written off the event loop (issue 23 §6, §9): committed in the background, bounded in bytes.
@Suite struct SliceWriteQueueTests {
    private let photo = ObjectIdentity(name: objectName("cat.jpg"), version: ObjectVersion(etag: "\"v1\""))

    @Test func submittedSlicesAreWrittenAndMarkedPresent() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let size = 2 * 65536 + 5
        _ = try store.store(photo, stored: StoredResponse(objectSize: size, headers: [:]), sliceSize: 65536, now: 0)
        #expect(store.submitSlice(photo, index: 2, bytes: pattern(3, 131_072..<size)))
        #expect(store.submitSlice(photo, index: 0, bytes: pattern(3, 0..<65536)))
        store.writes.waitUntilIdle()
        #expect(try store.lookup(photo.name)?.presentSlices == [0, 2])
        #expect(try store.read(photo, index: 2, within: 0..<size) == pattern(3, 131_072..<size))
        #expect(store.writes.pendingBytes == 0)
    }

    @Test func anEntryRecordedForAFillIsOnDiskBeforeItsSlicesAndSurvivesARestart() throws {
        let scratch = try ScratchStore()
        do {
            let store = try scratch.open()
            _ = try store.store(
                photo, stored: StoredResponse(objectSize: 65536, headers: [:]), sliceSize: 65536, now: 0,
                metaOnWriteQueue: true)
            #expect(try store.lookup(photo.name)?.identity == photo)  // in memory at once
            #expect(store.submitSlice(photo, index: 0, bytes: pattern(4, 0..<65536)))
            store.writes.waitUntilIdle()
        }
        let reopened = try scratch.open()
        #expect(try reopened.lookup(photo.name)?.presentSlices == [0])
        #expect(try reopened.read(photo, index: 0, within: 0..<65536) == pattern(4, 0..<65536))
    }

    @Test func aSliceOfAReplacedVersionOrOfTheWrongLengthIsNotNamed() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        _ = try store.store(photo, stored: StoredResponse(objectSize: 65536, headers: [:]), sliceSize: 65536, now: 0)
        let v2 = ObjectIdentity(name: photo.name, version: ObjectVersion(etag: "\"v2\""))
        _ = try store.store(v2, stored: StoredResponse(objectSize: 65536, headers: [:]), sliceSize: 65536, now: 1)
        #expect(store.submitSlice(photo, index: 0, bytes: pattern(1, 0..<65536)))  // v1's bytes, v2 stored
        #expect(store.submitSlice(v2, index: 0, bytes: pattern(2, 0..<100)))  // short
        store.writes.waitUntilIdle()
        #expect(try store.lookup(photo.name)?.presentSlices == [])
        #expect(store.metrics.snapshot.writeFailures == 1)  // the short one; the old version is not a failure
    }

    @Test func theQueueRefusesWorkOverItsBudget() {
        let queue = SliceWriteQueue(budget: 100)
        let gate = Locked(false)
        let ran = Atomic<Int>(0)
        // The first job holds the queue until the gate opens: the budget is taken while it waits.
        #expect(queue.submit(bytes: 60) {
            while !gate.withLock({ $0 }) { sched_yield() }
            ran.add(1, ordering: .relaxed)
        })
        #expect(!queue.submit(bytes: 60) { ran.add(1, ordering: .relaxed) })
        #expect(queue.submit(bytes: 40) { ran.add(1, ordering: .relaxed) })
        #expect(queue.pendingBytes == 100)
        gate.withLock { $0 = true }
        queue.waitUntilIdle()
        #expect(ran.load(ordering: .relaxed) == 2 && queue.pendingBytes == 0)
    }

    @Test func theWriterRunsAtIdlePriority() {
        let queue = SliceWriteQueue(budget: 100)
        let seen = Locked<(policy: Int32, nice: Int32)>((-1, 0))
        #expect(queue.submit(bytes: 1) {
            var policy: Int32 = 0
            var parameters = sched_param()
            _ = pthread_getschedparam(pthread_self(), &policy, &parameters)
            let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            seen.withLock { $0 = (policy, nice) }
        })
        queue.waitUntilIdle()
        let (policy, nice) = seen.withLock { $0 }
        #expect(policy == 5 /* SCHED_IDLE */ || nice == 19)
    }

    /// Counts its wakes.
    final class Waiter: FillWaiter {
        let wakes = Atomic<Int>(0)
        func wake() { wakes.add(1, ordering: .relaxed) }
    }

    @Test func aRefusedFillWaitsForRoomAndIsWokenAfterTheNextWrite() {
        let queue = SliceWriteQueue(budget: 100)
        let gate = Locked(false)
        #expect(queue.submit(bytes: 80) { while !gate.withLock({ $0 }) { sched_yield() } })
        #expect(!queue.submit(bytes: 60) {})
        let waiter = Waiter()
        #expect(queue.notifyWhenRoom(for: 60, waiter))  // full: it waits
        #expect(!queue.notifyWhenRoom(for: 20, Waiter()))  // 20 fits now: submit again instead
        gate.withLock { $0 = true }
        queue.waitUntilIdle()
        #expect(waiter.wakes.load(ordering: .relaxed) == 1)
        #expect(!queue.notifyWhenRoom(for: 60, Waiter()))  // empty: room for anything
    }

    @Test func fillsCuttingAtOnceAreBoundedByTheBudgetInSlices() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let slice = 1 << 20
        let allowed = SliceStore.writeBudget / slice
        for _ in 0..<allowed { #expect(store.takeFillPermit(sliceSize: slice)) }
        #expect(!store.takeFillPermit(sliceSize: slice))
        store.releaseFillPermit()
        #expect(store.takeFillPermit(sliceSize: slice))
        for _ in 0..<allowed { store.releaseFillPermit() }
        // A slice over the budget: one fill at a time, never none.
        #expect(store.takeFillPermit(sliceSize: 2 * SliceStore.writeBudget))
        #expect(!store.takeFillPermit(sliceSize: 2 * SliceStore.writeBudget))
    }

    @Test func aNewFillIsRefusedWhileTheWriteQueueHasNoRoomForItsSlice() throws {
        let scratch = try ScratchStore()
        let store = try scratch.open()
        let gate = Locked(false)
        let slice = 1 << 20
        // The disk is behind: the queue holds all but half a slice of its budget until the gate opens.
        #expect(
            store.writes.submit(bytes: SliceStore.writeBudget - slice / 2) {
                while !gate.withLock({ $0 }) { sched_yield() }
            })
        #expect(!store.takeFillPermit(sliceSize: slice))  // this answer passes uncached
        #expect(store.metrics.snapshot.fillsSkipped == 1)
        #expect(store.takeFillPermit(sliceSize: slice / 4))  // a smaller slice still fits
        gate.withLock { $0 = true }
        store.writes.waitUntilIdle()
        #expect(store.takeFillPermit(sliceSize: slice))
        store.releaseFillPermit()
        store.releaseFillPermit()
    }
}
