#if canImport(Glibc)
    import Glibc
#endif

/// A counting POSIX semaphore (ThreadSanitizer models `sem_post`/`sem_wait`).
public final class Semaphore: @unchecked Sendable {
    // @unchecked: `sem_t` is made for use from several threads; it is only reached through `sem_*` calls.
    private let semaphore: UnsafeMutablePointer<sem_t>

    public init() {
        semaphore = .allocate(capacity: 1)
        precondition(sem_init(semaphore, 0, 0) == 0, "sem_init failed")
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    public func signal() { sem_post(semaphore) }

    public func wait() { while sem_wait(semaphore) != 0 && errno == EINTR {} }
}
