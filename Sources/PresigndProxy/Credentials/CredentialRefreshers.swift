import PresigndConfig
import PresigndIO

/// Every refreshing upstream's `CredentialRefresher`, kept in step with the running configuration, on the
/// daemon's main loop. What they publish goes to the workers (`deliver`) and into readiness (`HealthState`).
final class CredentialRefreshers {
    private let loop: EventLoop
    private let logger: Logger
    private let health: HealthState
    private let deliver: (String, UpstreamCredentialState) -> Void
    private var refreshers: [String: CredentialRefresher] = [:]
    /// The configuration each refresher was made from (a reload that changes it replaces the refresher).
    private var configs: [String: RefreshingCredentialSource] = [:]
    /// What was last published, by upstream name.
    private(set) var published: [String: UpstreamCredentialState] = [:]

    init(
        loop: EventLoop, logger: Logger, health: HealthState,
        deliver: @escaping (String, UpstreamCredentialState) -> Void
    ) {
        self.loop = loop
        self.logger = logger
        self.health = health
        self.deliver = deliver
    }

    /// Starts a refresher for each new or changed source and stops those no longer configured
    /// (a reload that leaves one unchanged keeps it and its credentials).
    func update(_ processes: [String: RefreshingCredentialSource]) {
        for (name, refresher) in refreshers where processes[name] != configs[name] {
            refresher.stop()
            refreshers[name] = nil
            configs[name] = nil
            published[name] = nil
            // Workers forget the old keys (an upstream that comes back later starts from nothing).
            deliver(name, .unavailable("its credential source changed; fetching again"))
            health.setCredentialProblem(upstream: name, nil)
        }
        for (name, config) in processes.sorted(by: { $0.key < $1.key }) where refreshers[name] == nil {
            do {
                let refresher = try CredentialRefresher(
                    upstream: name, provider: Self.provider(for: config), loop: loop, logger: logger
                ) { [unowned self] upstream, state in self.publish(upstream: upstream, state) }
                refreshers[name] = refresher
                configs[name] = config
                refresher.start()
            } catch {
                health.setCredentialProblem(upstream: name, "cannot start the credentials refresher: \(error)")
                logger.error("Cannot start the credentials refresher", metadata: ["upstream": name])
            }
        }
    }

    static func provider(for source: RefreshingCredentialSource) -> any CredentialProvider {
        switch source {
        case .process(let config): ProcessCredentialProvider(config: config)
        case .container(let config): ContainerCredentialProvider(config: config)
        case .instanceMetadata(let endpoint): InstanceMetadataCredentialProvider(endpoint: endpoint)
        case .assumeRole(let config): AssumeRoleProvider(config: config, source: provider(for: config.source))
        case .webIdentity(let config): WebIdentityProvider(config: config)
        case .chain(let chain): ChainProvider(chain: chain, provider: provider(for: chain.selected))
        case .staticKeys(let credentials): StaticCredentialProvider(credentials: credentials.signing)
        case .r2Temporary(let config): R2TemporaryCredentialProvider(config: config)
        }
    }

    /// Per refreshing upstream, sorted by name, for `/metrics`.
    func metrics() -> [CredentialMetrics] {
        let now = CredentialRefresher.wallClockMilliseconds()
        return refreshers.keys.sorted().compactMap { refreshers[$0]?.metrics(nowMilliseconds: now) }
    }

    /// No more fetches (the daemon drains).
    func stopAll() {
        for refresher in refreshers.values { refresher.stop() }
    }

    private func publish(upstream: String, _ state: UpstreamCredentialState) {
        published[upstream] = state
        deliver(upstream, state)
        switch state {
        case .valid: health.setCredentialProblem(upstream: upstream, nil)
        case .unavailable(let reason): health.setCredentialProblem(upstream: upstream, reason)
        }
    }
}
