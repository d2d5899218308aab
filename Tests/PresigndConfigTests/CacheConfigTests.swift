import PresigndConfig
import Testing

/// `[bucket.cache]` (issue 23): keys, defaults, positions of mistakes, the shared-directory cap.
@Suite struct CacheConfigTests {
    private func bucket(_ name: String, cache: String) -> String {
        "\n[[bucket]]\nname = \"\(name)\"\nupstream = \"r2\"\n\(cache)\n"
    }

    @Test func defaultsApplyWhenOnlyDirectoryAndSizeAreWritten() throws {
        let text = minimalUpstream + "\n[bucket.cache]\ndirectory = \"/var/cache/p\"\nmax_size = \"10GiB\"\n"
        let configuration = try #require(loaded(text))
        let cache = try #require(configuration.buckets.first?.cache)
        #expect(cache.directory == "/var/cache/p" && cache.maxSize == 10 << 30)
        #expect(cache.sliceSize == 1 << 20 && cache.maxObjectSize == nil && cache.largestObject == 10 << 30)
        #expect(cache.revalidateAfter == .seconds(0) && cache.negativeTTL == .seconds(0))
        #expect(cache.includePrefixes.isEmpty && !cache.xCacheHeader)
    }

    @Test func readsEveryKeyInline() throws {
        let text =
            minimalUpstream
            + "\ncache = { directory = \"cache\", max_size = \"1GiB\", slice_size = \"256KiB\", "
            + "max_object_size = \"100MiB\", revalidate_after = \"5m\", include_prefixes = [\"assets/\"], "
            + "negative_ttl = \"10s\", x_cache_header = true }\n"
        let configuration = try ConfigLoader.parse(text: text, path: "/etc/presignd/p.toml", environment: [:]).get()
        let cache = try #require(configuration.buckets.first?.cache)
        #expect(cache.directory == "/etc/presignd/cache")
        #expect(cache.sliceSize == 256 << 10 && cache.maxObjectSize == 100 << 20 && cache.largestObject == 100 << 20)
        #expect(cache.revalidateAfter == .minutes(5) && cache.negativeTTL == .seconds(10))
        #expect(cache.includePrefixes == ["assets/"] && cache.xCacheHeader)
        #expect(cache.includes(key: "assets/a.css") && !cache.includes(key: "private/a"))
    }

    @Test func aWorkingCacheIsNotAWarning() throws {
        let text = minimalUpstream + "\ncache = { directory = \"/c\", max_size = \"1GiB\" }\n"
        let configuration = try #require(loaded(text))
        #expect(!configuration.warnings.map(\.message).contains { $0.contains("cache") })
    }

    @Test func reportsMistakesAtTheirPosition() {
        let text =
            minimalUpstream + "\n[bucket.cache]\nmax_size = \"1KiB\"\nslice_size = \"100KiB\"\nrevalidat_after = 1\n"
            + "include_prefixes = [\"/x\"]\n"
        let messages = described(errors(text))
        #expect(messages.contains { $0.hasPrefix("10:1: [bucket.cache] needs a directory") })
        #expect(messages.contains { $0.hasPrefix("11:12: 'max_size' must be from 1MiB") })
        #expect(
            messages.contains { $0.hasPrefix("13:1: unknown key 'revalidat_after'") && $0.contains("revalidate_after") }
        )
        let prefixes =
            minimalUpstream + "\n[bucket.cache]\ndirectory = \"/c\"\nmax_size = \"1GiB\"\ninclude_prefixes = [\"/x\"]\n"
        #expect(described(errors(prefixes)).first?.hasPrefix("13:21: include_prefixes entries") == true)
    }

    @Test func rejectsASliceSizeThatIsNotAMultipleOf64KiB() {
        let text = minimalUpstream + "\ncache = { directory = \"/c\", max_size = \"1GiB\", slice_size = 100000 }\n"
        #expect(described(errors(text)).contains { $0.contains("'slice_size' must be a multiple of 64KiB") })
    }

    @Test func bucketsSharingADirectoryMustShareTheCap() {
        let text =
            minimalUpstream + "\ncache = { directory = \"/c\", max_size = \"1GiB\" }\n"
            + bucket("videos", cache: "cache = { directory = \"/c\", max_size = \"2GiB\" }")
            + bucket("docs", cache: "cache = { directory = \"/d\", max_size = \"2GiB\" }")
        let messages = described(errors(text))
        #expect(messages.count == 1)
        #expect(
            messages.first?.hasPrefix("15:1: cache directory '/c' is shared with bucket 'photos' at line 10") == true)
        let same =
            minimalUpstream + "\ncache = { directory = \"/c\", max_size = \"1GiB\" }\n"
            + bucket("videos", cache: "cache = { directory = \"/c\", max_size = \"1GiB\" }")
        #expect(loaded(same)?.buckets.compactMap(\.cache).count == 2)
    }
}
