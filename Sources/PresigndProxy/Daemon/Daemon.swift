import PresigndConfig
import PresigndIO
import PresigndSync

#if canImport(Glibc)
    import Glibc
#endif

/// The running daemon: binds listeners, starts worker threads, and handles signals on the main
/// thread (TERM/INT drain, HUP reload-or-keep, PIPE ignored; DESIGN §5).
final class Daemon {
    private let loop: EventLoop
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let loadPlan: () -> Result<DaemonPlan, DaemonLoadError>
    private var plan: DaemonPlan
    private var workers: [Worker] = []
    private var metrics: [WorkerMetrics] = []
    private var threads: [pthread_t] = []
    private var boundListen: [ListenSpec] = []
    /// The admin listener's address as bound at start (a reload does not move it).
    private var boundAdmin: ListenSpec?
    /// Workers whose loops ended. Counted under a lock: `event_active` on an already active event
    /// is coalesced, so two workers ending together fire the main loop's callback only once.
    private let finishedWorkersCounter = FinishedCounter()
    private var hasStopped = false
    /// The bound addresses of the current listeners (for `STATUS=`).
    private var lastBound: [String] = []
    private var workerExited: CrossThreadEvent?
    private var signalEvents: [SignalEvent] = []
    private var shutdownTimer: LoopTimer?
    private var watchdogTimer: LoopTimer?
    private var admin: AdminServer?
    /// The refreshers of upstreams whose credentials a `credential_process` delivers (made at start).
    private var credentialRefreshers: CredentialRefreshers?
    /// What the refreshers last published, by upstream name (the admin side's presign API signs with it).
    var fetchedCredentials: [String: UpstreamCredentialState] { credentialRefreshers?.published ?? [:] }
    /// The refreshing upstreams' credential metrics (main thread, like the admin listener).
    var credentialMetrics: [CredentialMetrics] { credentialRefreshers?.metrics() ?? [] }
    private(set) var isDraining = false
    let health: HealthState
    /// `max_spool_total` across workers (a reload changes the limit, not the reservations held).
    let spoolBudget: SpoolBudget
    /// Every upstream's clock offset, shared by the workers and the presign API (issue 21 §4).
    let clocks = UpstreamClocks()
    /// The cache directories' stores (issue 23), opened before the workers start and kept across reloads.
    let cacheStores = CacheStores()
    /// The running configuration's settings (the admin side's presign API reads them; a reload swaps them).
    var settings: ProxySettings { plan.settings }
    /// The running configuration (the credentials API mints against its buckets' policies).
    var configuration: Configuration? { plan.configuration }

    init(
        plan: DaemonPlan, logger: Logger, environment: [String: String], loadDurationMicros: Int = 0,
        loadPlan: @escaping () -> Result<DaemonPlan, DaemonLoadError>
    ) throws(StartupError) {
        signal(SIGPIPE, SIG_IGN)
        do {
            try EventLoop.enableThreads()
            self.loop = try EventLoop()
        } catch {
            throw StartupError(error)
        }
        self.logger = logger
        self.plan = plan
        self.loadPlan = loadPlan
        self.notifier = SystemdNotifier(environment: environment)
        self.health = HealthState(loadDurationMicros: loadDurationMicros)
        self.spoolBudget = SpoolBudget(limit: plan.maxSpoolTotal)
        let watchdog = SystemdNotifier.watchdogMilliseconds(environment: environment)
        // Handlers first: a SIGTERM that arrives right after "Listening" must drain, not kill.
        do {
            try installSignals()
        } catch {
            throw StartupError(error)
        }
        try start(watchdogMilliseconds: watchdog)
    }

    private func start(watchdogMilliseconds: Int?) throws(StartupError) {
        // Before anything is bound: a directory another process holds is a start failure with nothing served.
        let prepared = try cacheStores.prepare(plan.cacheDirectories)
        logOpened(prepared)
        _ = cacheStores.commit(prepared)
        plan.settings = plan.settings.with(caches: cacheStores.current)
        let count = DaemonPlan.workerCount(configured: plan.workers)
        let sockets = try bindAll(plan.listen, workers: count)
        for index in 0..<count {
            let workerMetrics = WorkerMetrics()
            let worker = try Worker(
                index: index, settings: plan.settings, logger: logger, metrics: workerMetrics,
                spoolBudget: spoolBudget, clocks: clocks)
            try worker.listen(on: sockets[index])
            workers.append(worker)
            metrics.append(workerMetrics)
        }
        boundListen = plan.listen
        lastBound = sockets[0].map(\.boundAddress)
        for socket in sockets[0] {
            logger.info("Listening", metadata: ["listen.address": socket.boundAddress, "workers": String(count)])
        }
        if let adminSpec = plan.adminListen {
            let socket = try bind(adminSpec, access: plan.adminSocket)
            admin = try AdminServer(loop: loop, socket: socket, daemon: self, logger: logger)
            boundAdmin = adminSpec
            logger.info("Admin listening", metadata: ["listen.address": socket.boundAddress])
        }
        for line in plan.summary {
            logger.log(.info, line.message, pairs: line.metadata)
        }
        do {
            workerExited = try CrossThreadEvent(loop: loop) { [unowned self] in self.workerFinished() }
        } catch {
            throw StartupError(error)
        }
        for worker in workers {
            let exited = workerExited
            let finished = finishedWorkersCounter
            threads.append(
                try WorkerThread.start(worker) {
                    finished.increment()
                    exited?.fire()
                })
        }
        if let watchdogMilliseconds {
            // Pinged from the main loop: a wedged loop stops the pings and systemd restarts us.
            do {
                let timer = try LoopTimer(loop: loop, repeats: true) { [unowned self] in
                    self.notifier.notify("WATCHDOG=1")
                }
                try timer.schedule(milliseconds: max(1, watchdogMilliseconds / 2))
                watchdogTimer = timer
            } catch {
                throw StartupError(error)
            }
        }
        health.setReady(true)
        let refreshers = CredentialRefreshers(loop: loop, logger: logger, health: health) { [unowned self] in
            for worker in self.workers { worker.requestCredentials(upstream: $0, $1) }
        }
        refreshers.update(plan.refreshingCredentials)
        credentialRefreshers = refreshers
        notifier.notify("READY=1\nSTATUS=" + statusLine(sockets[0].map(\.boundAddress)))
    }

    /// Binds every listen address once per worker (TCP: SO_REUSEPORT on the same port; unix: dup).
    /// `held`: addresses this process already listens on (a reload), whose ports are not required free.
    /// On a failure every socket bound so far is closed again: none is left listening unserved.
    private func bindAll(
        _ specs: [ListenSpec], workers: Int, held: [ListenSpec] = []
    ) throws(StartupError) -> [[ListenSocket]] {
        var perWorker = [[ListenSocket]](repeating: [], count: workers)
        do {
            try bindAll(specs, held: held, into: &perWorker)
        } catch {
            for socket in perWorker.joined() { close(socket.fd) }
            throw error
        }
        return perWorker
    }

    private func bindAll(
        _ specs: [ListenSpec], held: [ListenSpec], into perWorker: inout [[ListenSocket]]
    ) throws(StartupError) {
        let workers = perWorker.count
        for spec in specs {
            let first = try bind(spec, joining: held.contains(spec), access: plan.unixSocket)
            perWorker[0].append(first)
            for index in 1..<max(1, workers) where index < workers {
                switch spec {
                case .tcp(let host, _):
                    let port = Int(first.boundAddress.split(separator: ":").last ?? "0") ?? 0
                    do {
                        perWorker[index].append(try ListenSocket.tcp(host: host, port: port, joining: true))
                    } catch {
                        throw StartupError(error)
                    }
                case .unix:
                    let copy = dup(first.fd)
                    guard copy >= 0 else { throw .socket(address: first.boundAddress, call: "dup", errno: errno) }
                    perWorker[index].append(ListenSocket(fd: copy, boundAddress: first.boundAddress, isUnix: true))
                }
            }
        }
    }

    private func bind(
        _ spec: ListenSpec, joining: Bool = false, access: UnixSocketAccess
    ) throws(StartupError) -> ListenSocket {
        do {
            switch spec {
            case .tcp(let host, let port): return try ListenSocket.tcp(host: host, port: port, joining: joining)
            case .unix(let path): return try ListenSocket.unix(path: path, access: access)
            }
        } catch {
            throw StartupError(error)
        }
    }

    private func installSignals() throws(IOError) {
        for number in [SIGTERM, SIGINT, SIGHUP] {
            signalEvents.append(
                try SignalEvent(loop: loop, signal: number) { [unowned self] in self.handleSignal(number) })
        }
    }

    private func handleSignal(_ number: Int32) {
        if number == SIGHUP {
            reload()
        } else {
            drain(signalName: number == SIGTERM ? "SIGTERM" : "SIGINT")
        }
    }

    /// Runs the main loop until the workers have drained (or `shutdown_timeout` passed).
    func run() -> Int32 {
        var status: Int32 = 0
        do {
            try loop.run()
        } catch {
            logger.error("Event loop failed", metadata: ["error": error.description])
            status = 71  // EX_OSERR
        }
        // Workers that finished are joined; after a shutdown timeout the rest are left to exit().
        let allFinished = finishedWorkersCounter.value == workers.count
        for thread in threads {
            if allFinished { pthread_join(thread, nil) } else { pthread_detach(thread) }
        }
        // A unix listener's file goes with the listener (bug g), the admin listener's too.
        Self.removeSocketFiles(of: boundListen + (boundAdmin.map { [$0] } ?? []))
        return status
    }

    private func drain(signalName: String) {
        guard !isDraining else { return }
        isDraining = true
        health.setReady(false)
        notifier.notify("STOPPING=1\nSTATUS=draining")
        logger.info(
            "Shutting down", metadata: ["signal": signalName, "timeout.ms": String(plan.shutdownTimeoutMilliseconds)])
        credentialRefreshers?.stopAll()
        // The admin listener stays up while draining: /readyz answers 503, /metrics shows the drain.
        for worker in workers { worker.requestDrain() }
        do {
            let timer = try LoopTimer(loop: loop) { [unowned self] in
                self.logger.warning("Shutdown timeout reached; closing remaining connections", metadata: [:])
                self.loop.exit()
            }
            try timer.schedule(milliseconds: plan.shutdownTimeoutMilliseconds)
            shutdownTimer = timer
        } catch {
            // Without the timer the drain still ends when the workers finish; only the deadline is lost.
            logger.error("Cannot arm the shutdown timeout", metadata: ["error": error.description])
        }
    }

    private func workerFinished() {
        if finishedWorkersCounter.value == workers.count && !hasStopped {
            hasStopped = true
            logger.info("Stopped", metadata: [:])
            loop.exit()
        }
    }

    private func reload() {
        guard !isDraining else { return }
        // systemd >= 253 wants MONOTONIC_USEC with RELOADING=1 (sd_notify(3)); older ones ignore it.
        notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(MonotonicClock.microseconds())\nSTATUS=reloading")
        let loadStarted = MonotonicClock.microseconds()
        let loaded = loadPlan()
        let loadDuration = MonotonicClock.microseconds() - loadStarted
        switch loaded {
        case .failure(let error):
            health.noteReload(ok: false)
            logger.error("Reload failed; keeping the running configuration", metadata: ["errors": error.description])
            for line in error.lines { logger.error("Configuration error", metadata: ["error": line]) }
        case .success(var newPlan):
            // New cache directories open first; the running stores change only once nothing else can fail.
            let prepared: CacheStores.Prepared
            do {
                prepared = try cacheStores.prepare(newPlan.cacheDirectories)
            } catch {
                health.noteReload(ok: false)
                logger.error("Reload failed; keeping the running configuration", metadata: ["error": "\(error)"])
                notifier.notify("READY=1\nSTATUS=" + statusLine(boundAddresses()))
                return
            }
            var sockets: [[ListenSocket]]? = nil
            if newPlan.listen != boundListen {
                do {
                    sockets = try bindAll(newPlan.listen, workers: workers.count, held: boundListen)
                } catch {
                    health.noteReload(ok: false)
                    logger.error("Reload failed; keeping the running configuration", metadata: ["error": "\(error)"])
                    notifier.notify("READY=1\nSTATUS=" + statusLine(boundAddresses()))
                    return
                }
                // Listeners this reload drops take their socket files with them (bug g).
                Self.removeSocketFiles(of: boundListen.filter { !newPlan.listen.contains($0) })
                boundListen = newPlan.listen
                for socket in sockets?.first ?? [] {
                    logger.info("Listening", metadata: ["listen.address": socket.boundAddress])
                }
            }
            logOpened(prepared)
            for failure in cacheStores.commit(prepared) {
                logger.error(
                    "Cache resize failed", metadata: ["cache.directory": failure.directory, "error": failure.reason])
            }
            newPlan.settings = newPlan.settings.with(caches: cacheStores.current)
            for (index, worker) in workers.enumerated() {
                worker.requestReload(newPlan.settings, listenSockets: sockets?[index])
            }
            plan = newPlan
            spoolBudget.setLimit(newPlan.maxSpoolTotal)
            credentialRefreshers?.update(newPlan.refreshingCredentials)
            health.noteReload(ok: true, loadDurationMicros: loadDuration)
            logger.info("Reloaded", metadata: ["duration.ms": AccessLogEntry.milliseconds(loadDuration)])
            if let sockets { lastBound = sockets.first?.map(\.boundAddress) ?? lastBound }
        }
        notifier.notify("READY=1\nSTATUS=" + statusLine(boundAddresses()))
    }

    /// One line per cache directory opened: what its check on open found and kept.
    private func logOpened(_ prepared: CacheStores.Prepared) {
        for store in prepared.opened {
            let statistics = store.statistics()
            let integrity = store.integrity
            logger.info(
                "Cache directory open",
                metadata: [
                    "cache.directory": store.directory, "cache.max_size": String(store.maxSize),
                    "cache.objects": String(statistics.objects), "cache.bytes": String(statistics.bytes),
                    "integrity.dropped_objects": String(integrity.droppedObjects),
                    "integrity.dropped_files": String(integrity.droppedFiles),
                ])
        }
    }

    private static func removeSocketFiles(of specs: [ListenSpec]) {
        for spec in specs {
            if case .unix(let path) = spec { unlink(path) }
        }
    }

    /// The `STATUS=` summary systemctl shows: listeners, workers, reload results.
    private func statusLine(_ addresses: [String]) -> String {
        let state = health.snapshot()
        var line = "serving on \(addresses.joined(separator: " ")) with \(workers.count) worker(s)"
        if state.reloadsOK + state.reloadsFailed > 0 {
            line += "; reloads: \(state.reloadsOK) ok, \(state.reloadsFailed) failed"
        }
        return line
    }

    private func boundAddresses() -> [String] { lastBound }

    /// Aggregated metrics of every worker.
    func metricSnapshots() -> [WorkerMetrics.Counters] {
        metrics.map { $0.snapshot() }
    }

    var workerCount: Int { workers.count }

    /// Each open cache directory's counters and contents (issue 23), by directory.
    var cacheFigures: [MetricsText.CacheFigures] {
        cacheStores.current.stores.sorted { $0.key < $1.key }.map {
            MetricsText.CacheFigures(
                directory: $0.key, counters: $0.value.metrics.snapshot, statistics: $0.value.statistics())
        }
    }

    /// Each worker's limit counters (accept pauses, shedding, slow bodies: issue 20).
    var limitCounters: [LimitCounters] { metrics.map(\.limits) }
}

/// Why a (re)load did not produce a plan.
struct DaemonLoadError: Error, CustomStringConvertible {
    var lines: [String]
    var description: String { "\(lines.count) error(s)" }
}

/// A thread-safe count of finished workers (a class so worker threads can hold it).
final class FinishedCounter: Sendable {
    private let count = Locked(0)

    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
