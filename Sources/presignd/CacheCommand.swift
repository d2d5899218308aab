import PresigndCache
import PresigndConfig

#if canImport(Glibc)
    import Glibc
#endif

/// `presignd cache stats|purge --config PATH [--bucket NAME] [--prefix PREFIX]`: the read cache's directories,
/// offline (issue 23). Opening a directory runs its integrity check; a running daemon holds its directories, and
/// the command then says so instead of touching them.
enum CacheCommand {
    static let usage = """
        Usage: presignd cache stats|purge [--config PATH] [--bucket NAME] [--prefix PREFIX]

        Show or empty the read cache's directories ([bucket.cache]) while the daemon is stopped.

          stats    objects, slices and bytes per directory and per bucket
          purge    drop every object in the directories, or those of --bucket whose key starts with --prefix

        Options:
          --config PATH     configuration file (default: \(ConfigLoader.defaultPath))
          --bucket NAME     only this bucket (a [[bucket]] name with a cache)
          --prefix PREFIX   purge only keys starting with PREFIX (needs --bucket)
          -h, --help        print this help

        Exit status: 0 done, 1 a directory is in use (the daemon runs), 64 usage, 71 OS error, 78 configuration.
        """

    static func main(_ arguments: [String]) -> Int32 {
        var exitCode = ExitCode.ok
        guard
            let parsed = PresigndCommand.parse(
                arguments, usage: usage, valued: ["config", "bucket", "prefix"], flags: [], exitCode: &exitCode)
        else { return exitCode }
        guard parsed.positionals.count == 1, let action = parsed.positionals.first, ["stats", "purge"].contains(action)
        else {
            Console.err("presignd: cache needs one of: stats, purge\n\n\(usage)")
            return ExitCode.usage
        }
        let prefix = parsed.value("prefix")
        guard prefix == nil || parsed.value("bucket") != nil, prefix == nil || action == "purge" else {
            Console.err("presignd: --prefix goes with purge and --bucket\n\n\(usage)")
            return ExitCode.usage
        }
        let path = parsed.value("config") ?? ConfigLoader.defaultPath
        let configuration: Configuration
        switch ConfigLoader.load(path: path, environment: processEnvironment()) {
        case .failure(let errors):
            for error in errors.errors { Console.err(error.description) }
            return ExitCode.config
        case .success(let loaded):
            configuration = loaded
        }
        var buckets = configuration.buckets.filter { $0.cache != nil }
        if let only = parsed.value("bucket") {
            buckets = buckets.filter { $0.name == only }
            guard !buckets.isEmpty else {
                Console.err("presignd: bucket '\(only)' is not defined or has no [bucket.cache] in \(path)")
                return ExitCode.config
            }
        }
        guard !buckets.isEmpty else {
            Console.out("no bucket in \(path) has a cache")
            return ExitCode.ok
        }
        var status = ExitCode.ok
        let wholeDirectories = parsed.value("bucket") == nil
        for directory in configuration.cacheDirectories
        where buckets.contains(where: { $0.cache?.directory == directory.path }) {
            let sharing = buckets.filter { $0.cache?.directory == directory.path }
            let code = run(
                action, directory: directory, buckets: wholeDirectories ? nil : sharing, configuration: configuration,
                prefix: prefix, listing: sharing)
            status = max(status, code)
        }
        return status
    }

    /// `buckets` nil: the whole directory (purge also drops objects of buckets no longer configured); `listing`:
    /// the buckets `stats` shows one by one.
    private static func run(
        _ action: String, directory: CacheDirectory, buckets: [BucketConfig]?,
        configuration: Configuration, prefix: String?, listing: [BucketConfig]
    ) -> Int32 {
        guard access(directory.path, F_OK) == 0 else {
            Console.out("cache \(directory.path): not created yet (empty)")
            return ExitCode.ok
        }
        let store: SliceStore
        do {
            store = try SliceStore(directory: directory.path, maxSize: directory.maxSize)
        } catch {
            Console.err("presignd: \(error)")
            if case .directoryLocked = error { return ExitCode.failure }
            return ExitCode.osError
        }
        let integrity = store.integrity
        if integrity.droppedObjects + integrity.droppedFiles > 0 {
            Console.out(
                "cache \(directory.path): integrity check dropped \(integrity.droppedObjects) objects and "
                    + "\(integrity.droppedFiles) files (partial writes, other versions, damage)")
        }
        if action == "stats" {
            Console.out("cache \(directory.path): \(describe(store.statistics()))")
            let owners = Set(listing.map { owner($0, configuration) })
            for bucket in listing {
                let name = owner(bucket, configuration)
                let statistics = store.statistics { $0.bucket == name.bucket && $0.upstream == name.upstream }
                Console.out("  bucket \(bucket.name): \(describe(statistics, withCapacity: false))")
            }
            let others = store.statistics {
                !owners.contains(ObjectName(upstream: $0.upstream, bucket: $0.bucket, key: ""))
            }
            if others.objects > 0 {
                Console.out("  no configured bucket (removed or moved): \(describe(others, withCapacity: false))")
            }
            return ExitCode.ok
        }
        do {
            var purged = 0
            if let buckets {
                for bucket in buckets {
                    let name = owner(bucket, configuration)
                    purged += try store.invalidate(
                        upstream: name.upstream, bucket: name.bucket, keyPrefix: prefix ?? "")
                }
            } else {
                purged = try store.invalidate(upstream: nil, bucket: nil, keyPrefix: "")
            }
            Console.out("cache \(directory.path): purged \(purged) objects; now \(describe(store.statistics()))")
            return ExitCode.ok
        } catch {
            Console.err("presignd: \(error)")
            return ExitCode.osError
        }
    }

    /// A bucket's upstream and bucket, as object names carry them (the key left empty).
    private static func owner(_ bucket: BucketConfig, _ configuration: Configuration) -> ObjectName {
        let upstream = configuration.upstreams[bucket.upstream].map(ObjectName.upstreamIdentity) ?? bucket.upstream
        return ObjectName(upstream: upstream, bucket: bucket.name, key: "")
    }

    private static func describe(_ statistics: StoreStatistics, withCapacity: Bool = true) -> String {
        var text =
            "\(statistics.objects) objects, \(statistics.slices) slices, \(statistics.bytes) bytes"
        if withCapacity && statistics.capacity > 0 {
            text += " of \(ByteSize.format(statistics.capacity)) (\(statistics.bytes * 100 / statistics.capacity)%)"
        }
        return text
    }
}
