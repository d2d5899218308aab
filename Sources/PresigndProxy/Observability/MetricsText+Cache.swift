import PresigndCache

/// The read cache's stores in the Prometheus text format (issue 23 §7), one series per cache directory. Hits,
/// misses, revalidations and their bytes are counted by the connection; evictions, size and write failures by the store.
extension MetricsText {
    /// A store's figures at one scrape.
    struct CacheFigures {
        var directory: String
        var counters: CacheMetrics.Snapshot
        var statistics: StoreStatistics
    }

    static func renderCache(_ stores: [CacheFigures]) -> String {
        guard !stores.isEmpty else { return "" }
        let families: [(String, String, String, (CacheFigures) -> Int)] = [
            ("presignd_cache_hits", "counter", "Requests answered from the cache.", { $0.counters.hits }),
            ("presignd_cache_misses", "counter", "Cacheable requests that fetched upstream.", { $0.counters.misses }),
            (
                "presignd_cache_revalidations", "counter", "Conditional requests upstream for a stored object.",
                { $0.counters.revalidations }
            ),
            (
                "presignd_cache_served_bytes", "counter", "Body bytes sent to clients from slice files.",
                { $0.counters.bytesServedFromCache }
            ),
            (
                "presignd_cache_fetched_bytes", "counter", "Body bytes fetched upstream to fill slices.",
                { $0.counters.bytesFetched }
            ),
            ("presignd_cache_evictions", "counter", "Slices evicted under max_size.", { $0.counters.evictions }),
            (
                "presignd_cache_write_failures", "counter", "Filled slices that could not be written to disk.",
                { $0.counters.writeFailures }
            ),
            (
                "presignd_cache_fills_skipped", "counter",
                "Cacheable answers passed uncached because the disk was behind or fills held the memory budget.",
                { $0.counters.fillsSkipped }
            ),
            ("presignd_cache_size_bytes", "gauge", "Bytes of present slices.", { $0.counters.size }),
            ("presignd_cache_max_size_bytes", "gauge", "The directory's max_size.", { $0.statistics.capacity }),
            ("presignd_cache_objects", "gauge", "Objects with at least one present slice.", { $0.statistics.objects }),
        ]
        var out = ""
        for (family, type, help, value) in families {
            out += header(family, help, type: type)
            let sample = type == "counter" ? family + "_total" : family
            for store in stores { out += "\(sample){directory=\(label(store.directory))} \(value(store))\n" }
        }
        return out
    }
}
