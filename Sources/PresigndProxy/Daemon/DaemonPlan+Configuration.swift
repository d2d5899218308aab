import PresigndConfig
import PresigndHTTP1
import PresigndIO
import PresigndSigV4

extension DaemonPlan {
    /// Maps a validated configuration to what the daemon runs. TLS contexts are built here, so a
    /// missing or bad `ca_file` fails the (re)load.
    init(configuration: Configuration) throws(StartupError) {
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
            target.refreshesCredentials = upstream.refreshingCredentials != nil
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
            route.maxUploadSize = bucket.maxUploadSize
            route.plusInPathIsSpace = bucket.plusInPathIsSpace
            route.redirect = bucket.redirect
            route.redirectExpires = min(max(1, bucket.redirectExpires.seconds), 604_800)
            route.maxPresignExpiry = min(max(1, bucket.maxPresignExpiry.seconds), 604_800)
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
        let limits = server.limits
        var clientLimits = ClientLimits()
        clientLimits.maxRequestLineBytes = limits.maxRequestLineBytes
        clientLimits.maxHeaderBytes = limits.maxHeaderBytes
        clientLimits.maxHeaderCount = limits.maxHeaderCount
        clientLimits.headerTimeoutMilliseconds = limits.headerTimeout.milliseconds
        clientLimits.idleTimeoutMilliseconds = limits.idleTimeout.milliseconds
        clientLimits.bodyIdleTimeoutMilliseconds = limits.bodyIdleTimeout.milliseconds
        clientLimits.maxConnectionsPerWorker = limits.maxConnections
        self.init(
            settings: ProxySettings(
                upstreams: upstreams, routes: routes, limits: clientLimits, accessLog: server.accessLog,
                allowedClients: server.allowedClients, spoolDirectory: server.spoolDirectory,
                maxSpoolSize: server.maxSpoolSize,
                adminAPI: AdminAPISettings(
                    tokenFile: server.adminTokenFile, corsAllowedOrigins: server.corsAllowedOrigins)),
            listen: server.listen.map(Self.spec), adminListen: server.adminListen.map(Self.spec),
            workers: server.workers, shutdownTimeoutMilliseconds: server.shutdownTimeout.milliseconds,
            unixSocketMode: server.unixSocketMode, summary: summary, refreshingCredentials: refreshingCredentials)
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
        let load: () -> Result<(Configuration, DaemonPlan), DaemonLoadError> = {
            switch ConfigLoader.load(path: configPath, environment: environment) {
            case .failure(let errors):
                return .failure(DaemonLoadError(lines: errors.errors.map(\.description)))
            case .success(let configuration):
                do {
                    return .success((configuration, try DaemonPlan(configuration: configuration)))
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
