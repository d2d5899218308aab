import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes every spooled upload together may hold (`max_spool_total`, issue 20), shared by all workers.
///
/// An upload reserves its declared length before its first byte is read (or, without one, each piece before it is
/// written) and gives the reservation back when its spool goes; one that does not fit is answered
/// `503 SlowDown`, so a burst of uploads cannot fill the disk.
final class SpoolBudget: Sendable {
    private let limitBytes: Atomic<Int>
    private let inUseBytes = Atomic<Int>(0)

    /// The automatic `max_spool_total`: half the free space of `directory` now, at most 64 GiB; 64 MiB when the
    /// directory cannot be examined (a spool that cannot be created fails on its own).
    static let automaticCap = 64 << 30

    init(limit: Int) {
        limitBytes = Atomic(limit)
    }

    var limit: Int { limitBytes.load(ordering: .relaxed) }
    var inUse: Int { inUseBytes.load(ordering: .relaxed) }

    /// A reload's new `max_spool_total`: reservations held stay, new ones meet the new limit.
    func setLimit(_ limit: Int) {
        limitBytes.store(limit, ordering: .relaxed)
    }

    /// Takes `bytes` from the budget; false (and nothing taken) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        var current = inUseBytes.load(ordering: .relaxed)
        while true {
            guard bytes <= limit - current else { return false }
            let (exchanged, original) = inUseBytes.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        inUseBytes.subtract(bytes, ordering: .relaxed)
    }

    static func automaticLimit(directory: String) -> Int {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return 64 << 20 }
        let free = Int(clamping: UInt64(info.f_bavail) &* UInt64(info.f_frsize))
        // Whole mebibytes: the figure check-config shows reads as a size.
        return min(automaticCap, max(free / 2 / (1 << 20) * (1 << 20), 1 << 20))
    }
}
