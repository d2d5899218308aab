import CEventMemory
import Testing

/// The per-thread cache behind libevent's allocation functions: chain sizes are reused, other sizes
/// are not kept, the cache is bounded, and realloc keeps contents across both kinds of block.
@Suite(.serialized)
struct EventMemoryTests {
    @Test func chainSizesAreReusedOtherSizesAreNot() throws {
        presignd_event_cache_flush()
        let block = try #require(presignd_event_malloc(4096))
        presignd_event_free(block)
        #expect(presignd_event_cached_blocks() == 1)
        #expect(presignd_event_cached_bytes() == 4096)
        let again = try #require(presignd_event_malloc(4096))
        #expect(again == block)
        #expect(presignd_event_cached_blocks() == 0)
        presignd_event_free(again)
        for size in [1000, 4095, 5000, 64 * 1024, 512] {
            presignd_event_free(presignd_event_malloc(size))
        }
        #expect(presignd_event_cached_blocks() == 1)
        // A different class does not hand out the cached 4 KiB block.
        let other = try #require(presignd_event_malloc(8192))
        #expect(other != block)
        presignd_event_free(other)
        presignd_event_cache_flush()
        #expect(presignd_event_cached_blocks() == 0 && presignd_event_cached_bytes() == 0)
    }

    @Test func theCacheIsBounded() {
        presignd_event_cache_flush()
        let small = (0..<40).map { _ in presignd_event_malloc(1024) }
        for block in small { presignd_event_free(block) }
        #expect(presignd_event_cached_blocks() == 32)
        presignd_event_cache_flush()
        let large = (0..<40).map { _ in presignd_event_malloc(32 * 1024) }
        for block in large { presignd_event_free(block) }
        #expect(presignd_event_cached_bytes() <= 512 * 1024)
        #expect(presignd_event_cached_blocks() == 16)
        presignd_event_cache_flush()
    }

    @Test(arguments: [(100, 300), (1024, 2048), (2048, 1500), (300, 4096), (4096, 100), (16384, 65536)])
    func reallocKeepsTheContents(from: Int, to: Int) throws {
        presignd_event_cache_flush()
        let block = try #require(presignd_event_malloc(from))
        let bytes = block.bindMemory(to: UInt8.self, capacity: from)
        for index in 0..<from { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
        let moved = try #require(presignd_event_realloc(block, to))
        let copied = moved.bindMemory(to: UInt8.self, capacity: to)
        for index in 0..<min(from, to) {
            #expect(copied[index] == UInt8(truncatingIfNeeded: index &* 7), "byte \(index)")
        }
        presignd_event_free(moved)
        presignd_event_free(nil)
        presignd_event_cache_flush()
    }
}
