/// Loads a configuration: reads the file, parses it, decodes and validates every table, resolves credentials,
/// and returns either a `Configuration` or every error found, sorted by position.
public enum ConfigLoader {
    /// The default path for `run` and `check-config`.
    public static let defaultPath = "/etc/presignd/presignd.toml"

    /// Reads `path` and loads it. `environment` supplies `AWS_*`, `HOME` and `AWS_SHARED_CREDENTIALS_FILE`.
    public static func load(path: String, environment: [String: String]) -> Result<Configuration, ConfigErrors> {
        switch FileReader.read(path) {
        case .failure(let error):
            return .failure(
                ConfigErrors(errors: [
                    ConfigError(
                        file: path, line: 0, column: 0, message: "cannot read configuration file: \(error.reason)")
                ]))
        case .success(let text):
            return parse(text: text, path: path, environment: environment)
        }
    }

    /// Loads configuration text; `path` names it in errors and anchors relative paths inside it.
    public static func parse(
        text: String, path: String, environment: [String: String]
    ) -> Result<Configuration, ConfigErrors> {
        let diagnostics = Diagnostics(file: path)
        let (root, parseErrors) = TOMLParser.parse(text, file: path)
        diagnostics.append(parseErrors)
        let reader = TableReader(
            table: root, context: "the top level", knownKeys: ["server", "upstream", "bucket", "token"],
            diagnostics: diagnostics
        )
        reader.reportUnknownKeys()

        let serverTable = reader.table("server") ?? TOMLTable(origin: .implicit, position: .start)
        let server = ServerConfig.decode(
            reader.reader(for: serverTable, context: "[server]", knownKeys: ServerConfig.keys), configPath: path)

        var upstreams: [String: UpstreamConfig] = [:]
        let upstreamTable = reader.table("upstream")
        for name in upstreamTable?.keys ?? [] {
            guard let value = upstreamTable?[name] else { continue }
            guard case .table(let table) = value.kind else {
                if case .invalid = value.kind { continue }
                reader.mismatch("upstream.\(name)", value, expected: "a table [upstream.\(name)]")
                continue
            }
            let upstreamReader = reader.reader(
                for: table, context: "[upstream.\(name)]", knownKeys: UpstreamConfig.keys)
            upstreams[name] = UpstreamConfig.decode(
                name: name, reader: upstreamReader, environment: environment, configPath: path)
        }

        let tokens = decodeTokens(reader, configPath: path)
        let buckets = decodeBuckets(
            reader, upstreamNames: upstreamTable?.keys ?? [], tokenNames: Array(tokens.keys), configPath: path)
        deriveR2Scopes(&upstreams, buckets: buckets, upstreamTable: upstreamTable, diagnostics: diagnostics)
        guard diagnostics.errors.isEmpty else { return .failure(ConfigErrors(errors: diagnostics.errors)) }
        let warnings = diagnostics.warnings.sorted { $0.position < $1.position }
        var configuration = Configuration(
            server: server, upstreams: upstreams, buckets: buckets, sourcePath: path, warnings: warnings)
        configuration.tokens = tokens
        return .success(configuration)
    }

    /// Every `[[bucket]]`, then the checks across buckets: unique names and mounts.
    private static func decodeBuckets(
        _ reader: TableReader, upstreamNames: [String], tokenNames: [String], configPath: String
    ) -> [BucketConfig] {
        let diagnostics = reader.diagnostics
        guard let value = reader.value("bucket") else {
            if !reader.contains("bucket") {
                diagnostics.error(
                    "no [[bucket]] is defined; add at least one (name, upstream, mount, access)", at: .start)
            }
            return []
        }
        guard let tables = value.tables else {
            reader.mismatch("bucket", value, expected: "an array of tables [[bucket]]")
            return []
        }
        var buckets: [Located<BucketConfig>] = []
        var caches: [(bucket: String, cache: CacheConfig, position: SourcePosition)] = []
        for table in tables {
            let bucketReader = reader.reader(for: table, context: "[[bucket]]", knownKeys: BucketConfig.keys)
            guard
                let bucket = BucketConfig.decode(
                    bucketReader, upstreamNames: upstreamNames, tokenNames: tokenNames, configPath: configPath)
            else { continue }
            if let cache = bucket.value.cache {
                caches.append((bucket.value.name, cache, bucketReader.keyPosition("cache")))
            }
            if let other = buckets.first(where: { $0.value.name == bucket.value.name }) {
                diagnostics.error(
                    "bucket '\(bucket.value.name)' is already defined at line \(other.position.line)",
                    at: bucketReader.table["name"]?.position ?? bucket.position)
            } else if let other = buckets.first(where: { $0.value.mount == bucket.value.mount }) {
                diagnostics.error(
                    "mount '\(bucket.value.mount)' is already used by bucket '\(other.value.name)' at line "
                        + "\(other.position.line)", at: bucketReader.table["mount"]?.position ?? bucket.position)
            }
            buckets.append(bucket)
        }
        CacheConfig.checkSharedDirectories(caches, diagnostics)
        return buckets.map(\.value)
    }
}
