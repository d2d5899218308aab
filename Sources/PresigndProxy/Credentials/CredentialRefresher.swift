import PresigndConfig
import PresigndIO
import PresigndSigV4
import PresigndSync

#if canImport(Glibc)
    import Glibc
#endif

/// What workers sign an upstream's requests with, when its credentials are fetched rather than configured.
enum UpstreamCredentialState: Sendable {
    /// Keys to sign with, and their wall-clock expiry in epoch milliseconds (nil: they do not expire).
    case valid(Credentials, expiresAtMilliseconds: Int?)
    /// No valid credentials: requests get 503 with this reason.
    case unavailable(String)
}

/// One refreshing upstream's credentials, on the daemon's main loop: it carries out the
/// `CredentialRefreshStateMachine`'s actions. A fetch runs on a thread of its own (the process may take seconds),
/// its outcome comes back through a cross-thread event; publishing goes to every worker's mailbox, so requests
/// never wait on a refresh and each sees one set of keys or the next.
final class CredentialRefresher {
    let upstream: String
    let provider: any CredentialProvider
    private var machine: CredentialRefreshStateMachine
    private let logger: Logger
    private let publish: (String, UpstreamCredentialState) -> Void
    private var timer: LoopTimer?
    private var completion: CrossThreadEvent?
    private let inbox = FetchInbox()
    private var isStopped = false
    /// Successful and failed fetches, for `/metrics`.
    private(set) var refreshes = 0
    private(set) var failures = 0

    /// What `/metrics` shows for this upstream.
    func metrics(nowMilliseconds now: Int) -> CredentialMetrics {
        CredentialMetrics(
            upstream: upstream, provider: provider.kind, refreshes: refreshes, failures: failures,
            isValid: machine.isValid(atMilliseconds: now),
            secondsToExpiry: machine.current?.expiresAtMilliseconds.map { max(0, $0 - now) / 1000 })
    }

    init(
        upstream: String, provider: any CredentialProvider, loop: EventLoop, logger: Logger,
        policy: CredentialRefreshPolicy = CredentialRefreshPolicy(),
        publish: @escaping (String, UpstreamCredentialState) -> Void
    ) throws(IOError) {
        self.upstream = upstream
        self.provider = provider
        self.machine = CredentialRefreshStateMachine(policy: policy)
        self.logger = logger
        self.publish = publish
        self.timer = try LoopTimer(loop: loop) { [unowned self] in
            self.perform(self.machine.timerFired(nowMilliseconds: Self.wallClockMilliseconds()))
        }
        // Weak: a fetch thread keeps the event alive and may fire it after a reload dropped this refresher.
        self.completion = try CrossThreadEvent(loop: loop) { [weak self] in self?.fetchFinished() }
    }

    /// The first fetch; until it succeeds the upstream is unavailable.
    func start() {
        publish(upstream, .unavailable("credentials from \(provider.kind) have not been fetched yet"))
        perform(machine.start())
    }

    /// No more fetches or timers (reload removed the upstream, or the daemon drains). A fetch under way finishes
    /// on its thread and is dropped.
    func stop() {
        isStopped = true
        timer?.cancel()
    }

    private func perform(_ actions: [CredentialRefreshAction]) {
        guard !isStopped else { return }
        for action in actions {
            switch action {
            case .fetch:
                startFetch()
            case .publish(let fetched):
                publish(upstream, .valid(fetched.credentials, expiresAtMilliseconds: fetched.expiresAtMilliseconds))
                logger.info(
                    "Credentials refreshed",
                    metadata: [
                        "upstream": upstream, "credentials.provider": provider.kind,
                        "credentials.key": fetched.keyHint,
                        "credentials.expires": fetched.expiresAtMilliseconds.map(CredentialRefreshStateMachine.iso)
                            ?? "never",
                    ])
            case .unavailable(let reason):
                publish(upstream, .unavailable(reason))
                logger.error(
                    "No valid credentials; requests to this upstream get 503 until a refresh succeeds",
                    metadata: [
                        "upstream": upstream, "credentials.provider": provider.kind, "reason": reason,
                        "fix": provider.fixHint,
                    ])
            case .schedule(let at):
                do {
                    try timer?.schedule(milliseconds: max(0, at - Self.wallClockMilliseconds()))
                } catch {
                    logger.error("Cannot schedule a credentials refresh", metadata: ["upstream": upstream])
                }
            }
        }
    }

    private func startFetch() {
        let provider = self.provider
        let inbox = self.inbox
        guard let completion else { return }
        let started = BackgroundThread.start {
            inbox.post(provider.fetch())
            completion.fire()
        }
        if !started {
            perform(
                machine.fetchFailed(
                    "cannot start a thread to fetch credentials", nowMilliseconds: Self.wallClockMilliseconds(),
                    jitter: Double.random(in: 0..<1)))
        }
    }

    private func fetchFinished() {
        for outcome in inbox.takeAll() {
            logProviderLines(outcome.logLines)
            let now = Self.wallClockMilliseconds()
            let jitter = Double.random(in: 0..<1)
            switch outcome.result {
            case .success(let fetched):
                refreshes += 1
                perform(machine.fetchSucceeded(fetched, nowMilliseconds: now, jitter: jitter))
            case .failure(let error):
                failures += 1
                let actions = machine.fetchFailed(error.message, nowMilliseconds: now, jitter: jitter)
                if !isStopped {
                    logger.warning(
                        "Credentials refresh failed",
                        metadata: [
                            "upstream": upstream, "credentials.provider": provider.kind, "error": error.message,
                            "failures": String(machine.consecutiveFailures),
                            "still.valid": String(machine.isValid(atMilliseconds: now)),
                        ])
                }
                perform(actions)
            }
        }
    }

    /// The provider's diagnostics (a process's stderr; its stdout holds the secrets and is never logged).
    private func logProviderLines(_ lines: [String]) {
        guard !isStopped else { return }
        for line in lines.prefix(20) {
            logger.warning(
                "Credential provider output",
                metadata: [
                    "upstream": upstream, "credentials.provider": provider.kind, "line": String(line.prefix(500)),
                ])
        }
    }

    /// Wall-clock time: expirations are wall-clock times.
    static func wallClockMilliseconds() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int(spec.tv_sec) * 1000 + Int(spec.tv_nsec) / 1_000_000
    }
}

/// One refreshing upstream's credential metrics.
struct CredentialMetrics: Sendable, Equatable {
    var upstream: String
    var provider: String
    var refreshes: Int
    var failures: Int
    var isValid: Bool
    /// Nil for credentials that do not expire or were never fetched.
    var secondsToExpiry: Int?
}

/// Fetch outcomes on their way from the fetch thread to the main loop.
final class FetchInbox: Sendable {
    private let outcomes = Locked<[CredentialFetchOutcome]>([])

    func post(_ outcome: CredentialFetchOutcome) { outcomes.withLock { $0.append(outcome) } }

    func takeAll() -> [CredentialFetchOutcome] {
        outcomes.withLock { queue in
            let taken = queue
            queue.removeAll()
            return taken
        }
    }
}
