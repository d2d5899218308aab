/// Reading `[bucket.cache]`, and the rule across buckets: one `max_size` per directory.
extension CacheConfig {
    static let keys = [
        "directory", "max_size", "slice_size", "max_object_size", "revalidate_after", "include_prefixes",
        "negative_ttl", "x_cache_header",
    ]

    /// Nil when `directory` or `max_size` is missing or unusable (already reported).
    static func decode(_ reader: TableReader, configPath: String) -> CacheConfig? {
        let diagnostics = reader.diagnostics
        defer { reader.reportUnknownKeys() }
        let directory = reader.string("directory")
        if let directory, directory.value.isEmpty {
            diagnostics.error("'directory' must not be empty", at: directory.position)
        } else if directory == nil && !reader.contains("directory") {
            diagnostics.error("\(reader.context) needs a directory", at: reader.table.position)
        }
        let maxSize = reader.size("max_size", in: ByteSize.mebibyte...(1 << 50))
        if maxSize == nil && !reader.contains("max_size") {
            diagnostics.error(
                "\(reader.context) needs max_size, e.g. \"10GiB\" (the cap for every bucket sharing the directory)",
                at: reader.table.position)
        }
        guard let directory, !directory.value.isEmpty, let maxSize else { return nil }
        var cache = CacheConfig(
            directory: FileReader.resolve(directory.value, relativeTo: configPath), maxSize: maxSize)
        if let size = reader.size("slice_size", in: sliceGranule...(256 << 20)) {
            if size % sliceGranule != 0 {
                diagnostics.error(
                    "'slice_size' must be a multiple of 64KiB, e.g. \"1MiB\"", at: reader.keyPosition("slice_size"))
            }
            cache.sliceSize = size
        }
        if cache.sliceSize > maxSize {
            diagnostics.error("'slice_size' must not exceed max_size", at: reader.keyPosition("slice_size"))
        }
        if let size = reader.size("max_object_size", in: 1...(5 << 40)) { cache.maxObjectSize = size }
        let durations = ConfigDuration.seconds(0)...ConfigDuration.days(365)
        if let value = reader.duration("revalidate_after", in: durations) { cache.revalidateAfter = value }
        if let value = reader.duration("negative_ttl", in: .seconds(0)...ConfigDuration.days(1)) {
            cache.negativeTTL = value
        }
        for prefix in reader.strings("include_prefixes") ?? [] {
            if prefix.value.isEmpty || prefix.value.hasPrefix("/") {
                diagnostics.error(
                    "include_prefixes entries are object key prefixes such as \"assets/\" (not empty, no leading '/')",
                    at: prefix.position)
            }
            cache.includePrefixes.append(prefix.value)
        }
        if let value = reader.boolean("x_cache_header") { cache.xCacheHeader = value }
        return cache
    }

    /// Buckets sharing a directory share one store and one cap: a second, different `max_size` is an error at the
    /// bucket that writes it.
    static func checkSharedDirectories(
        _ caches: [(bucket: String, cache: CacheConfig, position: SourcePosition)],
        _ diagnostics: Diagnostics
    ) {
        for (index, entry) in caches.enumerated() {
            if let first = caches[..<index].first(where: { $0.cache.directory == entry.cache.directory }),
                first.cache.maxSize != entry.cache.maxSize
            {
                diagnostics.error(
                    "cache directory '\(entry.cache.directory)' is shared with bucket '\(first.bucket)' at line "
                        + "\(first.position.line), whose max_size is \(ByteSize.format(first.cache.maxSize)); buckets "
                        + "sharing a directory share its cap: write the same max_size",
                    at: entry.position)
            }
        }
    }
}
