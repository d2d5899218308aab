import PresigndSync
import Synchronization

/// Where a store's filled slices are written, synced and committed (issue 23 §6, §9): one writer thread per store,
/// off every event loop (a commit's `fdatasync` took 2 to 8 ms a MiB here). The bytes it holds are bounded by
/// `budget`: a slice over it is refused, and the fill that offered it pauses its upstream until the queue has room
/// for it (`notifyWhenRoom`), so a disk slower than the network slows that transfer to the disk's speed, as a
/// proxy writing its cache in line would, and never grows the daemon's memory.
///
/// The writer runs at idle CPU priority (`SCHED_IDLE`, else nice 19), as background compaction threads do: filling
/// the cache is worth the CPU that serving leaves over, never CPU taken from serving. Under a load that keeps the
/// event loops busy the queue fills, new fills are refused (`SliceStore.takeFillPermit`) and misses pass uncached
/// at the speed of the uncached path; the writer catches up as soon as the loops idle.
public final class SliceWriteQueue: Sendable {
    private let jobs: WriterJobs
    private let pending = Atomic<Int>(0)
    /// Fills paused because the queue was full, woken once it is half empty (`notifyWhenRoom`).
    private let paused = Locked<[any FillWaiter]>([])
    /// The most bytes waiting to be written at once.
    public let budget: Int

    /// Starts the writer thread (it ends when the queue goes, after the jobs queued before).
    public init(budget: Int) {
        self.jobs = WriterJobs()
        self.budget = budget
        WriterJobs.startThread(jobs)
    }

    deinit { jobs.push(nil) }

    /// Queues `work`, which writes `bytes` bytes; false (nothing queued) when that would go over the budget. An
    /// empty queue takes one job of any size (a `slice_size` over the budget still fills, one slice at a time).
    public func submit(bytes: Int, _ work: @escaping @Sendable () -> Void) -> Bool {
        let after = pending.add(bytes, ordering: .relaxed).newValue
        guard after <= budget || after == bytes else {
            pending.subtract(bytes, ordering: .relaxed)
            return false
        }
        jobs.push { [self] in
            work()
            pending.subtract(bytes, ordering: .relaxed)
            let waiting = paused.withLock { waiting in
                defer { waiting.removeAll() }
                return waiting
            }
            for waiter in waiting { waiter.wake() }  // each tries again (and waits again if still no room)
        }
        return true
    }

    /// A fill whose slice of `bytes` was refused (`submit` false) waits for room instead of dropping it: `waiter`
    /// is woken after the next write. False when `submit` would take it now (submit again).
    public func notifyWhenRoom(for bytes: Int, _ waiter: any FillWaiter) -> Bool {
        paused.withLock { waiting in
            // Checked under the lock the writer takes to wake: no wake can slip between the check and the append.
            let queued = pending.load(ordering: .relaxed)
            guard queued > 0 && queued + bytes > budget else { return false }
            waiting.append(waiter)
            return true
        }
    }

    /// Bytes queued and not written yet.
    public var pendingBytes: Int { pending.load(ordering: .relaxed) }

    /// Returns once everything queued before the call is written (tests, `presignd cache`, shutdown).
    public func waitUntilIdle() {
        let done = Semaphore()
        jobs.push { done.signal() }
        done.wait()
    }
}

/// The writer thread's jobs, in order; a nil job ends the thread. The thread holds this, not the queue, so the
/// queue's `deinit` can end it.
final class WriterJobs: Sendable {
    /// Jobs from `head` on are waiting; the ones before it have run (removed in batches).
    private let queued = Locked<(jobs: [(@Sendable () -> Void)?], head: Int)>(([], 0))
    private let available = Semaphore()

    func push(_ job: (@Sendable () -> Void)?) {
        queued.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// The next job, waiting for one when there is none. One at a time: a job (and what it holds, such as the
    /// store) is released before the next runs, as `waitUntilIdle` expects.
    func take() -> (@Sendable () -> Void)? {
        available.wait()
        return queued.withLock { queued in
            let job = queued.jobs[queued.head]
            queued.jobs[queued.head] = nil
            queued.head += 1
            if queued.head == queued.jobs.count || queued.head >= 1024 {
                queued.jobs.removeFirst(queued.head)
                queued.head = 0
            }
            return job
        }
    }

    static func startThread(_ jobs: WriterJobs) {
        let started = BackgroundThread.start {
            BackgroundThread.lowerToIdlePriority()
            while let job = jobs.take() { job() }
        }
        precondition(started, "pthread_create for the cache writer failed")
    }
}

extension SliceStore {
    /// The most bytes of filled slices waiting for the disk, per store; also the most bytes of slices being
    /// collected in memory by fills at once (`takeFillPermit`).
    public static let writeBudget = 64 << 20

    /// A fill may cut slices of `sliceSize` bytes (each fill holds up to one in memory): false when the fills
    /// under way already hold `writeBudget`, or when the write queue has no room for one more slice (the disk is
    /// behind); the answer then passes uncached. One fill is always allowed while the queue has room.
    public func takeFillPermit(sliceSize: Int) -> Bool {
        let queued = writes.pendingBytes
        guard queued == 0 || queued + sliceSize <= writes.budget else {
            metrics.countFillSkipped()
            return false
        }
        let active = fillsCutting.add(1, ordering: .relaxed).newValue
        guard active == 1 || active * sliceSize <= Self.writeBudget else {
            fillsCutting.subtract(1, ordering: .relaxed)
            metrics.countFillSkipped()
            return false
        }
        return true
    }

    public func releaseFillPermit() { fillsCutting.subtract(1, ordering: .relaxed) }

    /// Queues a whole slice of `identity` (`SliceCutter`'s output) to be written, synced and marked present off
    /// the event loop; false when the write queue is over its budget (the caller stops filling). A slice whose
    /// object was replaced or invalidated meanwhile is dropped by the commit, as is one already present. `key`:
    /// the object's store key when the caller has it (else it is computed on the write queue).
    public func submitSlice(_ identity: ObjectIdentity, key: CacheKey? = nil, index: Int, bytes: [UInt8]) -> Bool {
        writes.submit(bytes: bytes.count) { [self] in
            do throws(CacheError) {
                let writer = try beginSlice(identity, key: key, index: index)
                try writer.append(bytes)
                try commit(writer)
                flights.written(writer.slice.key, index: index)
            } catch .objectChanged {
                // Replaced or invalidated while queued: its bytes belong to no stored version.
            } catch {
                metrics.countWriteFailure()
            }
        }
    }

    /// Runs `work` on the write queue once every slice submitted before it is written (a fill's end: its
    /// waiters are woken after its last slice, never before).
    public func afterWrites(_ work: @escaping @Sendable () -> Void) {
        _ = writes.submit(bytes: 0, work)
    }
}
