import CLibevent
import Testing

#if canImport(Glibc)
    import Glibc
#endif

private let chainPoolEnabled: Bool = {
    guard let setting = getenv("PRESIGND_CHAIN_POOL") else { return true }
    return strcmp(setting, "0") != 0
}()

/// The per-thread cache behind libevent's allocations (chain_pool.h): blocks of one size class come back LIFO,
/// other sizes and foreign blocks go to malloc and free untouched, and realloc keeps the contents.
/// Recognising a foreign block reads glibc's chunk header just before it, which AddressSanitizer reports by design:
/// the suite is off where scripts/sanitizers.sh turns the cache off (`PRESIGND_CHAIN_POOL=0`).
@Suite(.enabled(if: chainPoolEnabled)) struct ChainPoolTests {
    static func isPoolBlock(_ pointer: UnsafeMutableRawPointer) -> Bool {
        presignd_pool_header(pointer)[1] == 0x444E_4749_5345_5250
    }

    @Test(arguments: [1025, 2048, 4096 + 80, 8192, 16384 + 1, 65536])
    func aFreedBlockIsReusedForItsClass(size: Int) throws {
        let first = try #require(presignd_pool_malloc(size))
        #expect(Self.isPoolBlock(first))
        memset(first, 0xAB, size)  // the whole requested size is usable
        presignd_pool_free(first)
        let second = try #require(presignd_pool_malloc(size))
        #expect(second == first)
        presignd_pool_free(second)
    }

    @Test(arguments: [1, 512, 1024, 65537, 1 << 20])
    func sizesOutsideTheClassesAreLeftToMalloc(size: Int) throws {
        let block = try #require(presignd_pool_malloc(size))
        #expect(!Self.isPoolBlock(block))
        memset(block, 0xCD, size)
        presignd_pool_free(block)
    }

    @Test func blocksFromPlainMallocAreFreedByFree() throws {
        for size in [16, 3000, 40000, 200_000] {
            let block = try #require(malloc(size))
            #expect(!Self.isPoolBlock(block))
            presignd_pool_free(block)  // must not be cached (ASan in scripts/sanitizers.sh checks the free)
        }
        presignd_pool_free(nil)
    }

    @Test func reallocKeepsTheContents() throws {
        let block = try #require(presignd_pool_malloc(3000))
        let bytes = block.assumingMemoryBound(to: UInt8.self)
        for index in 0..<3000 { bytes[index] = UInt8(truncatingIfNeeded: index) }
        // Within the class's 4 KiB: the same block.
        #expect(presignd_pool_realloc(block, 4096) == block)
        let grown = try #require(presignd_pool_realloc(block, 50_000))
        let moved = grown.assumingMemoryBound(to: UInt8.self)
        #expect((0..<3000).allSatisfy { moved[$0] == UInt8(truncatingIfNeeded: $0) })
        let outside = try #require(presignd_pool_realloc(grown, 300_000))
        #expect(!Self.isPoolBlock(outside))
        let kept = outside.assumingMemoryBound(to: UInt8.self)
        #expect((0..<3000).allSatisfy { kept[$0] == UInt8(truncatingIfNeeded: $0) })
        presignd_pool_free(outside)
    }

    @Test func theCacheKeepsABoundedNumberPerClass() throws {
        // Empty this thread's 2 KiB list first (other tests on the thread may have left blocks in it).
        let drained = try (0..<64).map { _ in try #require(presignd_pool_malloc(2000)) }
        let blocks = try (0..<40).map { _ in try #require(presignd_pool_malloc(2000)) }
        for block in blocks { presignd_pool_free(block) }  // the first 32 are kept, the last 8 go to free()
        let again = try (0..<40).map { _ in try #require(presignd_pool_malloc(2000)) }
        #expect(Set(again.prefix(32)) == Set(blocks.prefix(32)))
        #expect(again.prefix(32).elementsEqual(blocks.prefix(32).reversed()))  // last in, first out
        for block in again + drained { presignd_pool_free(block) }
    }
}
