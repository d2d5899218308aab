import PresigndCache

#if canImport(Glibc)
    import Glibc
#endif

// presignd-cache-probe MODE DIRECTORY: fills a slice store until the crash test kills it (SIGKILL), for
// PresigndCacheTests.CrashRecoveryTests. Prints `pid N`, then `committed OBJECT SLICE` after each commit.
//   pause-mid-write   after 5 commits, writes half of the next slice, says `mid-write` and waits to be killed
//   fill-forever      never stops: the kill lands wherever it lands
// presignd-cache-probe seed|lookup CONFIG BUCKET KEY...: see Seed.swift.

/// Byte `offset` of probe object `object`: every slice's content is known to the test.
func probeByte(object: Int, offset: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: offset &* 31 &+ object &* 7 &+ offset >> 16)
}

func say(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { buffer in _ = write(1, buffer.baseAddress, buffer.count) }
}

let arguments = CommandLine.arguments
if arguments.count >= 4, ["seed", "lookup"].contains(arguments[1]) {
    seedOrLookup(arguments[1], config: arguments[2], bucket: arguments[3], keys: Array(arguments.dropFirst(4)))
}
guard arguments.count == 3, ["pause-mid-write", "fill-forever"].contains(arguments[1]) else {
    say("usage: presignd-cache-probe pause-mid-write|fill-forever DIRECTORY")
    exit(64)
}
let pausesMidWrite = arguments[1] == "pause-mid-write"
let sliceSize = 64 << 10
let objectSize = 10 * sliceSize + 1000
say("pid \(getpid())")
do {
    let store = try SliceStore(directory: arguments[2], maxSize: 1 << 30)
    var commits = 0
    for object in 0... {
        let name = ObjectName(upstream: "probe", bucket: "b", key: "object-\(object)")
        let identity = ObjectIdentity(name: name, version: ObjectVersion(etag: "\"\(object)\""))
        let stored = StoredResponse(objectSize: objectSize, headers: ["ETag": "\"\(object)\""])
        let entry = try store.store(identity, stored: stored, sliceSize: sliceSize, now: 0)
        for index in 0..<entry.layout.sliceCount {
            let range = entry.layout.bytes(ofSlice: index)
            let writer = try store.beginSlice(identity, index: index)
            var offset = range.lowerBound
            while offset < range.upperBound {
                let end = min(offset + 4096, range.upperBound)
                try writer.append((offset..<end).map { probeByte(object: object, offset: $0) })
                offset = end
                if pausesMidWrite && commits == 5 && offset - range.lowerBound >= range.count / 2 {
                    say("mid-write")
                    while true { pause() }
                }
            }
            try store.commit(writer)
            commits += 1
            say("committed \(object) \(index)")
        }
    }
} catch {
    say("error \(error)")
    exit(1)
}
