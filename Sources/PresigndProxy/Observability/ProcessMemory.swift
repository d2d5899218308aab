import CLibevent
import Glibc
import PresigndConfig

/// The process's memory as `/metrics` reports it. The heap figure counts live allocations only, so it does not
/// move when glibc keeps freed blocks in an arena (RSS does): it is the figure a leak shows in.
enum ProcessMemory {
    /// Bytes in use in all malloc arenas plus blocks served by mmap. Walks every arena under its lock: for a
    /// scrape, not for a hot path.
    static func heapInUseBytes() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
    }

    /// Resident set size from `/proc/self/statm` (its second field, in pages); nil where that cannot be read.
    static func residentBytes() -> Int? {
        guard case .success(let statm) = FileReader.read("/proc/self/statm", limit: 4096) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }
}
