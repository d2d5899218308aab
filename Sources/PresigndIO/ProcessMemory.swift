internal import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// The process's memory as `/metrics` reports it. The heap figure counts live allocations only, so it does not
/// move when glibc keeps freed blocks in an arena (RSS does): it is the figure a leak shows in.
public enum ProcessMemory {
    /// Bytes in use in all malloc arenas plus blocks served by mmap (`mallinfo2`, which the Glibc module does not
    /// export; the CLibevent shim includes malloc.h). Walks every arena under its lock: for a scrape, not for a
    /// hot path.
    public static func heapInUseBytes() -> Int {
        let info = mallinfo2()
        return Int(info.uordblks) + Int(info.hblkhd)
    }

    /// Resident set size from `/proc/self/statm` (its second field, in pages); nil where that cannot be read.
    public static func residentBytes() -> Int? {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 256)
        var count = 0
        repeat {
            count = bytes.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress, raw.count) }
        } while count < 0 && errno == EINTR
        guard count > 0 else { return nil }
        let fields = bytes[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        return pageSize > 0 ? pages * pageSize : nil
    }
}
