import Foundation
import PresigndCache
import Testing

/// A process killed (SIGKILL) while it fills the store: on the next open the integrity check keeps only whole,
/// correct slices (issue 23 §2).
@Suite struct CrashRecoveryTests {
    /// The probe's path: next to the test bundle in the build directory.
    private static var probePath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let exe = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = exe.lastIndex(of: "/") else { return nil }
        let path = String(exe[..<slash]) + "/presignd-cache-probe"
        return access(path, X_OK) == 0 ? path : nil
    }

    /// The probe's byte at `offset` of object `object` (Tests/PresigndCacheProbe/main.swift).
    private func probeByte(object: Int, offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: offset &* 31 &+ object &* 7 &+ offset >> 16)
    }

    /// Runs the probe in `mode` until `lines` says to stop, kills it with SIGKILL, returns what it printed.
    private func runAndKill(_ mode: String, directory: String, until stop: ([String]) -> Bool) throws -> [String] {
        let path = try #require(Self.probePath)
        let pipe = try #require(popen("'\(path)' \(mode) '\(directory)'", "r"))
        defer { pclose(pipe) }
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while !stop(lines), fgets(&buffer, Int32(buffer.count), pipe) != nil {
            let length = buffer.firstIndex(of: 0) ?? 0
            lines.append(
                String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingCharacters(
                    in: .newlines))
        }
        let pid = try #require(lines.first.flatMap { Int32($0.dropFirst(4)) }, "probe said: \(lines)")
        #expect(kill(pid, SIGKILL) == 0)
        return lines
    }

    /// Opens the store the probe left and checks every present slice byte by byte.
    private func checkRecovered(_ directory: String) throws -> (IntegrityReport, Int) {
        let store = try SliceStore(directory: directory, maxSize: 1 << 30)
        var checked = 0
        for object in 0..<1000 {
            let name = ObjectName(upstream: "probe", bucket: "b", key: "object-\(object)")
            guard let entry = try store.lookup(name) else { break }
            for index in entry.presentSlices {
                let bytes = entry.layout.bytes(ofSlice: index)
                let read = try store.read(entry.identity, index: index, within: bytes)
                #expect(read == bytes.map { probeByte(object: object, offset: $0) }, "object \(object) slice \(index)")
                checked += 1
            }
        }
        return (store.integrity, checked)
    }

    @Test(.enabled(if: probePath != nil, "presignd-cache-probe is not built next to the tests"))
    func killedMidWriteLeavesOnlyWholeSlices() throws {
        let scratch = try ScratchStore()
        let lines = try runAndKill("pause-mid-write", directory: scratch.directory) { $0.last == "mid-write" }
        #expect(lines.filter { $0.hasPrefix("committed") }.count == 5, "\(lines)")
        // The half-written sixth slice is on disk, under a temporary name.
        let objects = scratch.directory + "/objects"
        let files = try FileManager.default.subpathsOfDirectory(atPath: objects)
        #expect(files.contains { $0.contains("/tmp-5-") })
        // The killed process's lock went with it: the directory opens, the partial file is dropped.
        let (report, checked) = try checkRecovered(scratch.directory)
        #expect(report == IntegrityReport(droppedObjects: 0, droppedFiles: 1, keptSlices: 5))
        #expect(checked == 5)
        #expect(try !FileManager.default.subpathsOfDirectory(atPath: objects).contains { $0.contains("tmp-") })
    }

    @Test(.enabled(if: probePath != nil, "presignd-cache-probe is not built next to the tests"))
    func killedAnywhereWhileFillingLeavesOnlyCorrectSlices() throws {
        let scratch = try ScratchStore()
        // Killed after a number of commits that varies per run: wherever the probe is then.
        let stopAfter = Int.random(in: 3...40)
        let lines = try runAndKill("fill-forever", directory: scratch.directory) {
            $0.filter { $0.hasPrefix("committed") }.count >= stopAfter
        }
        let (report, checked) = try checkRecovered(scratch.directory)
        #expect(checked >= stopAfter, "\(lines.suffix(3)) \(report)")
        #expect(report.keptSlices == checked)
        // A kill right after an object's last slice lands in the next object's `store`: its directory may hold
        // only a `tmp-meta-*`, dropped as an object without `meta` (stopAfter 11, 22 or 33: one run in 13).
        #expect(report.droppedObjects <= 1, "\(lines.suffix(3)) \(report)")
    }

    @Test func theCheckDropsForeignAndDamagedState() throws {
        let scratch = try ScratchStore()
        let identity = ObjectIdentity(name: objectName("k"), version: ObjectVersion(etag: "\"e\""))
        let directory: String
        do {
            let store = try scratch.open()
            _ = try store.fill(identity, size: 3 * 65536, sliceSize: 65536, seed: 4)
            let key = try CacheKey(identity.name).hex
            directory = scratch.directory + "/objects/" + key.prefix(2) + "/" + key
        }
        let manager = FileManager.default
        let slices = try manager.contentsOfDirectory(atPath: directory).filter { $0 != "meta" }.sorted()
        let tag = String(try #require(slices.first?.split(separator: "-").first))
        // A slice cut short, a slice of another version, an index outside the object, a stray file.
        let cut = try #require(FileHandle(forWritingAtPath: directory + "/" + tag + "-1"))
        try cut.truncate(atOffset: 100)
        try cut.close()
        #expect(manager.createFile(atPath: directory + "/0123456789abcdef-0", contents: Data(count: 65536)))
        #expect(manager.createFile(atPath: directory + "/" + tag + "-9", contents: Data(count: 65536)))
        #expect(manager.createFile(atPath: directory + "/" + tag + "-02", contents: Data(count: 65536)))
        // An entry whose meta is damaged, and one in a directory that is not its key.
        let broken = scratch.directory + "/objects/ab/" + String(repeating: "ab", count: 32)
        try manager.createDirectory(atPath: broken, withIntermediateDirectories: true)
        #expect(manager.createFile(atPath: broken + "/meta", contents: Data("presignd-cache-meta 1\n3:abc".utf8)))
        try manager.copyItem(
            atPath: directory, toPath: scratch.directory + "/objects/ab/" + String(repeating: "cd", count: 32))
        // A symbolic link to a directory outside: removed as a link, what it points at is left alone.
        let outside = scratch.scratch.path + "/outside"
        try manager.createDirectory(atPath: outside, withIntermediateDirectories: true)
        #expect(manager.createFile(atPath: outside + "/precious", contents: Data("keep".utf8)))
        try manager.createSymbolicLink(atPath: directory + "/" + tag + "-3", withDestinationPath: outside)
        let store = try scratch.open()
        #expect(store.integrity == IntegrityReport(droppedObjects: 2, droppedFiles: 5, keptSlices: 2))
        #expect(manager.fileExists(atPath: outside + "/precious"))
        #expect(try store.lookup(identity.name)?.presentSlices == [0, 2])
        #expect(try store.read(identity, index: 2, within: 0..<3 * 65536) == pattern(4, 131_072..<196_608))
    }
}
