#if canImport(Glibc)
    import Glibc
#endif

// presignd-cache-bench DIRECTORY: the measurements behind the cache's layout and eviction choices (issue 23).
let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: presignd-cache-bench DIRECTORY   (a scratch directory on the file system the cache would use)")
    exit(64)
}
LayoutBenchmark(directory: arguments[1], sliceSize: 1 << 20, slices: 256, reads: 20_000).run()
EvictionBenchmark().run()
