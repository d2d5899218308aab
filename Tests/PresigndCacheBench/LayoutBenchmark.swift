#if canImport(Glibc)
    import Glibc
#endif

/// Sparse file per object against one file per slice (issue 23): the syscall patterns the store would run,
/// timed on the file system the cache would live on. Prints figures; the decision is in docs/ARCHITECTURE.md.
struct LayoutBenchmark {
    let directory: String
    let sliceSize: Int
    let slices: Int
    let reads: Int

    func run() {
        print("layout: \(slices) slices of \(sliceSize >> 10) KiB in \(directory)")
        let buffer = [UInt8](repeating: 0x5A, count: sliceSize)
        for sync in [true, false] {
            let sparse = time { fillSparse(buffer, sync: sync) }
            let files = time { fillFiles(buffer, sync: sync) }
            print(
                "  fill \(sync ? "with fdatasync" : "no sync      "): sparse \(ms(sparse)) ms, per-slice \(ms(files)) ms "
                    + "(\(ms(sparse / Double(slices), digits: 3)) / \(ms(files / Double(slices), digits: 3)) ms a slice)"
            )
        }
        let readSize = 64 << 10
        var generator = SystemRandomNumberGenerator()
        let picks = (0..<reads).map { _ in Int(generator.next() % UInt64(slices)) }
        let kept = open(path("sparse.data"), O_RDONLY)
        var scratch = [UInt8](repeating: 0, count: readSize)
        let keptRead = time { for slice in picks { _ = pread(kept, &scratch, readSize, off_t(slice * sliceSize)) } }
        close(kept)
        let openedRead = time {
            for slice in picks {
                let fd = open(path("sparse.data"), O_RDONLY)
                _ = pread(fd, &scratch, readSize, off_t(slice * sliceSize))
                close(fd)
            }
        }
        let sliceRead = time {
            for slice in picks {
                let fd = open(path("slice.\(slice)"), O_RDONLY)
                _ = pread(fd, &scratch, readSize, 0)
                close(fd)
            }
        }
        print(
            "  \(reads) hits of 64 KiB: sparse fd kept \(us(keptRead / Double(reads))) µs, sparse open+close "
                + "\(us(openedRead / Double(reads))) µs, per-slice open+close \(us(sliceRead / Double(reads))) µs")
        let unlinkAll = time { for slice in 0..<slices { unlink(path("slice.\(slice)")) } }
        print(
            "  evict a slice: per-slice unlink \(us(unlinkAll / Double(slices))) µs; sparse needs "
                + "fallocate(PUNCH_HOLE), which Swift's Glibc module does not declare (no _GNU_SOURCE); "
                + "files per object: sparse 2, per-slice \(slices + 1)")
        unlink(path("sparse.data"))
        unlink(path("sparse.index"))
    }

    private func fillSparse(_ buffer: [UInt8], sync: Bool) {
        let data = open(path("sparse.data"), O_RDWR | O_CREAT | O_TRUNC, 0o600)
        let index = open(path("sparse.index"), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        var record = [UInt8](repeating: 1, count: 32)
        for slice in 0..<slices {
            _ = buffer.withUnsafeBytes { pwrite(data, $0.baseAddress, sliceSize, off_t(slice * sliceSize)) }
            if sync { fdatasync(data) }
            _ = write(index, &record, record.count)
        }
        close(data)
        close(index)
    }

    private func fillFiles(_ buffer: [UInt8], sync: Bool) {
        for slice in 0..<slices {
            let fd = open(path("tmp"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = buffer.withUnsafeBytes { write(fd, $0.baseAddress, sliceSize) }
            if sync { fdatasync(fd) }
            close(fd)
            rename(path("tmp"), path("slice.\(slice)"))
        }
    }

    private func path(_ name: String) -> String { directory + "/" + name }
}

/// Seconds taken by `body`, on the monotonic clock.
func time(_ body: () -> Void) -> Double {
    var start = timespec()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    body()
    clock_gettime(CLOCK_MONOTONIC, &end)
    return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
}

func ms(_ seconds: Double, digits: Int = 0) -> String { fixed(seconds * 1e3, digits: digits) }
func us(_ seconds: Double) -> String { fixed(seconds * 1e6, digits: 1) }

/// `value` with `digits` decimals, without Foundation's `String(format:)`.
func fixed(_ value: Double, digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    guard digits > 0 else { return String(scaled) }
    let whole = scaled / Int(scale)
    let fraction = String(scaled % Int(scale))
    return "\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
}
