import PresigndHTTP1
import Testing

@testable import PresigndProxy

/// The signed-head cache hands back a signed head only for the very same head bytes in the same second.
struct SignedHeadCacheTests {
    private static let head = Array(
        "GET /photos/cat.jpg HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nRange: bytes=0-9\r\n\r\n".utf8)
    private static let signed = Array(
        "GET /photos/cat.jpg HTTP/1.1\r\nAuthorization: AWS4-HMAC-SHA256 ...\r\n\r\n".utf8)

    private func probe(_ cache: inout SignedHeadCache, _ bytes: [UInt8], second: Int) -> SignedHeadCache.Probe {
        bytes.withUnsafeBytes { cache.probe($0, epochSeconds: second) }
    }

    private func fill(_ cache: inout SignedHeadCache, _ probe: SignedHeadCache.Probe, second: Int, path: String = "/p")
    {
        guard case .miss(let ticket) = probe else {
            Issue.record("expected a miss, got \(probe)")
            return
        }
        let request = ParsedRequest(
            head: RequestHead(method: "GET", target: path), framing: .none, expectsContinue: false, isKeepAlive: true)
        cache.fill(
            ticket, epochSeconds: second, signedHead: Self.signed, request: request, logPath: path, bucket: "photos",
            upstreamIndex: 2)
    }

    @Test func anIdenticalHeadInTheSameSecondHitsWithWhatWasFilled() {
        var cache = SignedHeadCache()
        fill(&cache, probe(&cache, Self.head, second: 100), second: 100, path: "/photos/cat.jpg")
        guard case .hit(let slot) = probe(&cache, Self.head, second: 100) else {
            Issue.record("expected a hit")
            return
        }
        let entry = cache.entry(at: slot)
        #expect(entry.signedHead == Self.signed)
        #expect(entry.logPath == "/photos/cat.jpg")
        #expect(entry.bucket == "photos")
        #expect(entry.upstreamIndex == 2)
        #expect(entry.key == Self.head)
        #expect(cache.request(at: slot)?.head.target == "/photos/cat.jpg")
    }

    @Test func anotherSecondMisses() {
        var cache = SignedHeadCache()
        fill(&cache, probe(&cache, Self.head, second: 100), second: 100)
        if case .hit = probe(&cache, Self.head, second: 101) { Issue.record("a newer second hit") }
        if case .hit = probe(&cache, Self.head, second: 99) { Issue.record("an older second hit") }
    }

    @Test func anUnfilledMissNeverHits() {
        var cache = SignedHeadCache()
        _ = probe(&cache, Self.head, second: 100)  // missed, then the request was refused: no fill
        if case .hit = probe(&cache, Self.head, second: 100) { Issue.record("an unfilled slot hit") }
    }

    /// Every single-byte change anywhere in the head (method, path, version, any field name or value) misses.
    @Test func everyOneByteChangeMisses() {
        for index in Self.head.indices {
            var changed = Self.head
            changed[index] ^= 0x01
            var shorter = Self.head
            shorter.remove(at: index)
            for other in [changed, shorter] {
                var cache = SignedHeadCache()
                fill(&cache, probe(&cache, Self.head, second: 7), second: 7)
                if case .hit = probe(&cache, other, second: 7) { Issue.record("byte \(index) changed and still hit") }
            }
        }
    }

    /// Two heads sharing a slot: a miss evicts nothing until it is filled, a fill evicts the slot's entry, and a
    /// ticket is void once another head was probed (its pending key is gone).
    @Test func missesEvictOnlyWhenFilledAndStaleTicketsAreIgnored() throws {
        var cache = SignedHeadCache()
        let slotOfHead = Self.slot(Self.head)
        let rival = try #require(
            (0..<10_000).lazy.map { Array("GET /k\($0) HTTP/1.1\r\n\r\n".utf8) }.first {
                Self.slot($0) == slotOfHead && $0 != Self.head
            })
        fill(&cache, probe(&cache, Self.head, second: 5), second: 5, path: "/first")
        let stale = probe(&cache, rival, second: 5)
        guard case .hit = probe(&cache, Self.head, second: 5) else {
            Issue.record("an unfilled miss in the same slot evicted the entry")
            return
        }
        _ = probe(&cache, Array("GET /other HTTP/1.1\r\n\r\n".utf8), second: 5)
        fill(&cache, stale, second: 5, path: "/rival")
        if case .hit = probe(&cache, rival, second: 5) { Issue.record("a stale ticket filled the slot") }
        fill(&cache, probe(&cache, rival, second: 5), second: 5, path: "/rival")
        if case .hit = probe(&cache, Self.head, second: 5) { Issue.record("the evicted head still hit") }
        guard case .hit(let slot) = probe(&cache, rival, second: 5) else {
            Issue.record("the rival missed after its fill")
            return
        }
        #expect(cache.entry(at: slot).logPath == "/rival")
        #expect(cache.entry(at: slot).key == rival)
    }

    @Test func oversizedHeadsAreNotCached() {
        var cache = SignedHeadCache()
        let large = Self.head + [UInt8](repeating: UInt8(ascii: "a"), count: SignedHeadCache.maxKeyBytes)
        #expect(probe(&cache, large, second: 1) == .ineligible)
        var fits = SignedHeadCache()
        let justFits = [UInt8](repeating: UInt8(ascii: "b"), count: SignedHeadCache.maxKeyBytes)
        if case .ineligible = probe(&fits, justFits, second: 1) { Issue.record("a head of the limit was refused") }
    }

    @Test func removeAllForgetsEverything() {
        var cache = SignedHeadCache()
        fill(&cache, probe(&cache, Self.head, second: 3), second: 3)
        cache.removeAll()
        if case .hit = probe(&cache, Self.head, second: 3) { Issue.record("hit after removeAll") }
    }

    private static func slot(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { SignedHeadCache.slot(of: $0) }
    }
}
