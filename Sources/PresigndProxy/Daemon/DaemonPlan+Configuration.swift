import PresigndCache
import PresigndConfig
import PresigndHTTP1
import PresigndIO
import PresigndSigV4

extension DaemonPlan {
    /// Maps a validated configuration to what the daemon runs. TLS contexts are built here, so a
    /// missing or bad `ca_file` fails the (re)load.
    /// `descriptorLimit`: the soft `RLIMIT_NOFILE` in force (after `DescriptorLimit.raiseSoftToHard`); a
    /// configuration that cannot serve one connection per worker within it is refused.
    init(configuration: Configuration, descriptorLimit: Int = Int.max) throws(StartupError) {
        let server = configuration.server
        let names = configuration.upstreamNames
        var upstreams: [UpstreamTarget] = []
        var summary: [(message: String, metadata: [(String, String)])] = []
        var refreshingCredentials: [String: RefreshingCredentialSource] = [:]
        for name in names {
            guard let upstream = configuration.upstreams[name] else { continue }
            let usesTLS = upstream.endpoint.scheme == .https
            let tls = usesTLS ? try TLSClientContext(caFile: upstream.caFile, verifiesPeer: upstream.verifyTLS) : nil
            var target = UpstreamTarget(
                name: name, usesTLS: usesTLS, host: upstream.endpoint.host, port: upstream.endpoint.port,
                hostHeader: upstream.endpoint.hostHeader, region: upstream.region,
                credentials: upstream.credentials.signing, tls: tls)
            target.connectTimeoutMilliseconds = upstream.connectTimeout.milliseconds
            target.firstByteTimeoutMilliseconds = upstream.firstByteTimeout.milliseconds
            target.idleTimeoutMilliseconds = upstream.idleTimeout.milliseconds
            target.maxIdleConnections = upstream.maxIdleConnections
            target.forwardsAWSChunked = upstream.forwardsAWSChunked
            target.maxPutSize = upstream.maxPutSize
            target.refreshesCredentials = upstream.refreshingCredentials != nil
            target.retry = RetryPolicy(
                maxAttempts: upstream.maxAttempts, baseDelayMilliseconds: upstream.retryBaseDelay.milliseconds,
                maxDelayMilliseconds: upstream.retryMaxDelay.milliseconds)
            target.isR2 = upstream.provider == .r2
            target.objectNamespace = ObjectName.upstreamIdentity(upstream)
            if let source = upstream.refreshingCredentials { refreshingCredentials[name] = source }
            upstreams.append(target)
            summary.append(
                (
                    "Upstream",
                    [
                        ("upstream", name), ("provider", upstream.provider.rawValue),
                        ("endpoint", upstream.endpoint.description),
                        ("credentials", upstream.refreshingCredentials?.description ?? upstream.credentials.source),
                    ]
                ))
            if usesTLS && !upstream.verifyTLS {
                summary.append(
                    (
                        "TLS verification is OFF for this upstream: anyone on the path can read your requests",
                        [("upstream", name)]
                    ))
            }
        }
        var routes: [BucketRoute] = []
        for bucket in configuration.buckets {
            guard let upstreamIndex = names.firstIndex(of: bucket.upstream) else { continue }
            var route = BucketRoute(
                name: bucket.name, upstreamIndex: upstreamIndex, mount: Array(bucket.mount.utf8),
                isReadOnly: bucket.access == .readOnly)
            route.allowedMethods = Set(bucket.allowedMethods.map(ASCII.uppercased))
            route.allowedPrefixes = bucket.allowedPrefixes
            route.policy.allowedActions = bucket.allowedActions
            route.policy.deniedActions = bucket.deniedActions
            route.principals = bucket.allow
            route.maxUploadSize = bucket.maxUploadSize
            route.plusInPathIsSpace = bucket.plusInPathIsSpace
            route.redirect = bucket.redirect
            route.redirectExpires = min(max(1, bucket.redirectExpires.seconds), 604_800)
            route.maxPresignExpiry = min(max(1, bucket.maxPresignExpiry.seconds), 604_800)
            route.cache = bucket.cache
            routes.append(route)
            summary.append(
                (
                    "Bucket",
                    [
                        ("bucket", bucket.name), ("mount", bucket.mount), ("upstream", bucket.upstream),
                        ("access", bucket.access.rawValue),
                    ]
                ))
        }
        if let presign = server.presignAPISummary {
            summary.append(("Presign API", [("access", server.presignAPIAccess.rawValue), ("detail", presign)]))
        }
        let limits = server.limits
        var clientLimits = ClientLimits()
        clientLimits.maxRequestLineBytes = limits.maxRequestLineBytes
        clientLimits.maxHeaderBytes = limits.maxHeaderBytes
        clientLimits.maxHeaderCount = limits.maxHeaderCount
        clientLimits.headerTimeoutMilliseconds = limits.headerTimeout.milliseconds
        clientLimits.idleTimeoutMilliseconds = limits.idleTimeout.milliseconds
        clientLimits.bodyIdleTimeoutMilliseconds = limits.bodyIdleTimeout.milliseconds
        let descriptors = try Self.descriptorReport(configuration, limit: descriptorLimit)
        clientLimits.maxConnectionsPerWorker = descriptors.maxConnections
        summary.append(
            (
                "File descriptors",
                [
                    ("limit", descriptors.limit == Int.max ? "unlimited" : String(descriptors.limit)),
                    ("max_connections", String(descriptors.maxConnections)),
                    ("needed", String(descriptors.needed)),
                ]
            ))
        clientLimits.maxAdminConnections = limits.maxAdminConnections
        clientLimits.adminRequestTimeoutMilliseconds = limits.adminRequestTimeout.milliseconds
        clientLimits.maxAdminBodyBytes = limits.maxAdminBodySize
        clientLimits.minBodyRate = limits.minBodyRate
        clientLimits.bodyRateWindowMilliseconds = limits.bodyRateWindow.milliseconds
        self.init(
            settings: ProxySettings(
                upstreams: upstreams, routes: routes, limits: clientLimits, accessLog: server.accessLog,
                allowedClients: server.allowedClients, spoolDirectory: server.spoolDirectory,
                maxSpoolSize: server.maxSpoolSize,
                adminAPI: AdminAPISettings(
                    access: server.presignAPIAccess, tokenFile: server.adminTokenFile,
                    corsAllowedOrigins: server.corsAllowedOrigins),
                tokens: configuration.tokens.sorted { $0.key < $1.key }.map {
                    ($0.key, Array($0.value.exposedValue.utf8))
                }, retryBudget: server.retryBudget, retryBodyBuffer: server.retryBodyBuffer),
            listen: server.listen.map(Self.spec), adminListen: server.adminListen.map(Self.spec),
            workers: server.workers, shutdownTimeoutMilliseconds: server.shutdownTimeout.milliseconds,
            unixSocket: UnixSocketAccess(
                mode: server.unixSocketMode, owner: server.unixSocketOwner, group: server.unixSocketGroup),
            adminSocket: UnixSocketAccess(
                mode: server.adminSocketMode ?? server.unixSocketMode,
                owner: server.adminSocketOwner ?? server.unixSocketOwner,
                group: server.adminSocketGroup ?? server.unixSocketGroup),
            summary: summary, descriptors: descriptors,
            maxSpoolTotal: server.maxSpoolTotal ?? SpoolBudget.automaticLimit(directory: server.spoolDirectory),
            refreshingCredentials: refreshingCredentials, configuration: configuration,
            cacheDirectories: configuration.cacheDirectories)
    }

    /// The descriptors the configuration needs within `limit`, and `max_connections` (configured, or the most that
    /// fit). Throws when not even one connection per worker fits.
    static func descriptorReport(_ configuration: Configuration, limit: Int) throws(StartupError) -> DescriptorReport {
        let server = configuration.server
        let workers = workerCount(configured: server.workers)
        let budget = DescriptorBudget(
            workers: workers, listenersPerWorker: server.listen.count,
            idlePerUpstream: configuration.upstreamNames.compactMap { configuration.upstreams[$0]?.maxIdleConnections },
            adminConnections: server.adminListen == nil ? 0 : server.limits.maxAdminConnections,
            cacheDirectories: configuration.cacheDirectories.count)
        let fitting = budget.fittingConnections(limit: limit)
        guard fitting > 0 else {
            throw .descriptorLimit(
                "the file-descriptor limit \(limit) is below the \(budget.needed(connectionsPerWorker: 1)) that "
                    + "\(workers) worker(s) need for one connection each: raise LimitNOFILE= (systemd) or "
                    + "--ulimit nofile= (Docker), or lower workers, max_idle_connections or max_admin_connections")
        }
        let connections = server.limits.maxConnections ?? fitting
        return DescriptorReport(
            limit: limit, maxConnections: connections, isAutomatic: server.limits.maxConnections == nil,
            needed: budget.needed(connectionsPerWorker: connections), workers: workers)
    }

    static func spec(_ address: ListenAddress) -> ListenSpec {
        switch address {
        case .tcp(let host, let port): .tcp(host: host, port: port)
        case .unix(let path): .unix(path: path)
        }
    }
}

/// The `run` subcommand's entry into the proxy: load, start, serve until drained.
public enum ProxyMain {
    /// Returns the process exit code: 0 after a clean drain, 78 for configuration errors,
    /// 71 when listeners or the event loop cannot be set up.
    public static func run(configPath: String, environment: [String: String]) -> Int32 {
        // Before anything opens a descriptor the limit is counted against (issue 20).
        let descriptorLimit = raiseDescriptorLimit()
        let load: () -> Result<(Configuration, DaemonPlan), DaemonLoadError> = {
            switch ConfigLoader.load(path: configPath, environment: environment) {
            case .failure(let errors):
                return .failure(DaemonLoadError(lines: errors.errors.map(\.description)))
            case .success(let configuration):
                do {
                    return .success(
                        (configuration, try DaemonPlan(configuration: configuration, descriptorLimit: descriptorLimit))
                    )
                } catch {
                    return .failure(DaemonLoadError(lines: ["\(configPath): \(error)"]))
                }
            }
        }
        let configuration: Configuration
        let plan: DaemonPlan
        let loadStarted = MonotonicClock.microseconds()
        let loaded = load()
        let loadDuration = MonotonicClock.microseconds() - loadStarted
        switch loaded {
        case .failure(let error):
            let logger = Logger()
            for line in error.lines { logger.error("Configuration error", metadata: ["error": line]) }
            return 78
        case .success(let loaded):
            (configuration, plan) = loaded
        }
        let server = configuration.server
        let logger = Logger(
            minimumLevel: level(server.logLevel), format: server.logFormat == .json ? .json : .logfmt)
        for warning in configuration.warnings {
            logger.warning("Configuration warning", metadata: ["warning": warning.description])
        }
        if let warning = plan.descriptors.warning {
            logger.warning("Configuration warning", metadata: ["warning": warning])
        }
        do {
            let daemon = try Daemon(
                plan: plan, logger: logger, environment: environment, loadDurationMicros: loadDuration,
                loadPlan: { load().map { $0.1 } })
            return daemon.run()
        } catch {
            logger.error("Cannot start", metadata: ["error": error.description])
            return 71
        }
    }

    static func level(_ level: ServerConfig.LogLevel) -> Logger.Level {
        switch level {
        case .debug: .debug
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
    }
}
