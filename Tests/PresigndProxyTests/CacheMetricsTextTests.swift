import PresigndCache
import Testing

@testable import PresigndProxy

@Suite struct CacheMetricsTextTests {
    @Test func rendersOneSeriesPerDirectoryWithCountersSuffixed() {
        let metrics = CacheMetrics()
        for _ in 0..<3 { metrics.countHit(bytes: 100) }
        let counters = metrics.snapshot
        let text = MetricsText.renderCache([
            .init(directory: "/var/cache/b", counters: counters, statistics: StoreStatistics(objects: 2, capacity: 10)),
            .init(directory: "/var/cache/\"a\"", counters: CacheMetrics().snapshot, statistics: StoreStatistics()),
        ])
        #expect(text.contains("# TYPE presignd_cache_hits_total counter\n"))
        #expect(text.contains("presignd_cache_hits_total{directory=\"/var/cache/b\"} 3\n"))
        #expect(text.contains("presignd_cache_served_bytes_total{directory=\"/var/cache/b\"} 300\n"))
        #expect(text.contains("presignd_cache_objects{directory=\"/var/cache/b\"} 2\n"))
        #expect(text.contains("presignd_cache_max_size_bytes{directory=\"/var/cache/\\\"a\\\"\"} 0\n"))
        #expect(MetricsText.renderCache([]).isEmpty)
    }
}
