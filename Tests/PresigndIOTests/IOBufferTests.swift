import PresigndIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct IOBufferTests {
    @Test func appendsCountsCopiesAndDrains() throws {
        let owned = try OwnedIOBuffer()
        let buffer = owned.buffer
        #expect(buffer.isEmpty)
        try buffer.append([1, 2, 3])
        try buffer.append("abc")
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 1)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 9)
        try buffer.append(UnsafeRawBufferPointer(raw))
        #expect(buffer.count == 10)
        #expect(buffer.copyOut(4) == [1, 2, 3, UInt8(ascii: "a")])
        #expect(buffer.count == 10)  // copyOut keeps the bytes
        buffer.drain(3)
        #expect(buffer.copyOut(100) == Array("abc".utf8) + [9, 9, 9, 9])
        buffer.drain(100)
        #expect(buffer.isEmpty)
        #expect(buffer.copyOut(5) == [])
    }

    @Test func firstSegmentShowsTheFirstChainAndTheTotal() throws {
        let owned = try OwnedIOBuffer()
        owned.buffer.withFirstSegment { segment, available in
            #expect(segment.count == 0)
            #expect(available == 0)
        }
        let other = try OwnedIOBuffer()
        try owned.buffer.append(pattern(100, seed: 1))
        try other.buffer.append(pattern(50, seed: 2))
        try owned.buffer.append(takingAllOf: other.buffer)
        #expect(other.buffer.isEmpty)
        owned.buffer.withFirstSegment { segment, available in
            #expect(available == 150)
            #expect(segment.count >= 100)
            #expect(Array(segment.prefix(100)) == pattern(100, seed: 1))
        }
        owned.buffer.withContiguousPrefix(150) { bytes in
            #expect(Array(bytes) == pattern(100, seed: 1) + pattern(50, seed: 2))
        }
    }

    @Test func moveHandsBytesOverInOrder() throws {
        let source = try OwnedIOBuffer()
        let destination = try OwnedIOBuffer()
        let first = pattern(300_000, seed: 3)
        try source.buffer.append(first)
        try destination.buffer.append("head")
        #expect(try source.buffer.move(to: destination.buffer, count: 100_000) == 100_000)
        #expect(source.buffer.count == 200_000)
        #expect(sameBytes(destination.buffer.copyOut(.max), Array("head".utf8) + Array(first[..<100_000])))
        #expect(try source.buffer.move(to: destination.buffer, count: 1_000_000) == 200_000)
        #expect(source.buffer.isEmpty)
        #expect(destination.buffer.count == 300_004)
    }

    @Test func readsFromAndWritesToAFile() throws {
        var template = Array("/tmp/presignd-iobuffer-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        defer { close(fd) }
        let payload = pattern(700_000, seed: 4)
        let out = try OwnedIOBuffer()
        try out.buffer.append(payload)
        var written = 0
        while !out.buffer.isEmpty { written += try out.buffer.write(to: fd) }
        #expect(written == payload.count)
        #expect(lseek(fd, 0, SEEK_SET) == 0)
        let back = try OwnedIOBuffer()
        var total = 0
        while true {
            let got = try back.buffer.read(from: fd, upTo: 256 * 1024)
            if got == 0 { break }
            #expect(got <= 256 * 1024)
            total += got
        }
        #expect(total == payload.count)
        #expect(sameBytes(back.buffer.copyOut(.max), payload))
    }

    @Test func readErrorsAreTyped() throws {
        let buffer = try OwnedIOBuffer()
        #expect(throws: IOError.system(call: "read", errno: EBADF)) { _ = try buffer.buffer.read(from: -1, upTo: 10) }
        try buffer.buffer.append("x")
        #expect(throws: IOError.system(call: "evbuffer_write", errno: EBADF)) { _ = try buffer.buffer.write(to: -1) }
    }
}
