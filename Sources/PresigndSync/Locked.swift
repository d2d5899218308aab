#if canImport(Glibc)
    import Glibc
#endif

/// A value reached only under a lock: `withLock` runs its body with the value while holding a pthread mutex.
///
/// The one lock of the project. Not the standard library's `Synchronization.Mutex`: on Linux that one waits in
/// priority-inheritance futex system calls, which ThreadSanitizer does not model, so under contention every access
/// made under it is reported as a race, and a real race would hide among them. ThreadSanitizer intercepts
/// `pthread_mutex_lock`/`unlock` (they order the accesses between them), and uncontended they cost what the futex
/// lock costs: one atomic exchange each way.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `withLock`, between locking and unlocking `mutex`.
    // It lives in its own allocation, as the mutex does, and not in a stored property: the mutex is what keeps
    // its accesses exclusive, and a stored property modified across the call to `body` would also be checked at
    // run time on every `withLock` (an access-set entry in thread-local storage: about 150 instructions, once a
    // request on the metrics' path).
    private let value: UnsafeMutablePointer<Value>
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed (\(status))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value, holding the lock for exactly that long. `body` must not call `withLock` on the
    /// same instance (the mutex is not recursive: that would wait forever).
    public func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed (\(locked))")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
