import PresigndSync
import Synchronization

/// The rules of clock-skew correction (issue 21 §4), pure: the offset is read from the upstream's `Date` response
/// header, as the AWS SDKs for Rust and Java do, and added to the local clock wherever presignd signs for that
/// upstream (requests, redirects, presigned links).
enum ClockSkew {
    /// Differences this small are the `Date` header's one-second resolution and the trip, not a skewed clock.
    static let toleranceSeconds = 2
    /// An offset past this is logged (once per upstream), and an authentication error whose `Date` is this far from
    /// the request's signing time is retried once with the corrected clock.
    static let significantSeconds = 60
    /// The S3 errors a skewed signing clock causes.
    static let rejectionCodes: Set<String> = ["RequestTimeTooSkewed", "RequestExpired", "SignatureDoesNotMatch"]

    /// The offset to use once the upstream said `upstreamDate` while the local clock read `localNow` (epoch
    /// seconds), or nil to keep `current`.
    static func updatedOffset(current: Int, upstreamDate: Int, localNow: Int) -> Int? {
        let measured = upstreamDate - localNow
        guard abs(measured - current) > toleranceSeconds else { return nil }
        return abs(measured) <= toleranceSeconds ? 0 : measured
    }

    /// Whether an answer is the upstream refusing a signature because of the signing time: one of the skew
    /// errors, with a `Date` far from the time the request was signed at.
    static func isSkewRejection(code: String?, upstreamDate: Int?, signedAt: Int) -> Bool {
        guard let code, rejectionCodes.contains(code), let upstreamDate else { return false }
        return abs(upstreamDate - signedAt) > significantSeconds
    }
}

/// One upstream's clock offset, shared by every worker, the admin listener's presign API and `/metrics`: an atomic
/// each reads without a lock.
final class UpstreamClock: Sendable {
    let name: String
    private let offset = Atomic<Int>(0)
    private let warned = Atomic<Bool>(false)

    init(name: String) {
        self.name = name
    }

    /// Seconds to add to the local clock to read the upstream's.
    var offsetSeconds: Int { offset.load(ordering: .relaxed) }

    /// Takes one `Date` observation. Returns the new offset when it changed, and whether this is the first time
    /// the offset passed `ClockSkew.significantSeconds` (the caller logs that warning, once per upstream).
    func observe(upstreamDate: Int, localNow: Int) -> (offset: Int, warn: Bool)? {
        guard
            let updated = ClockSkew.updatedOffset(
                current: offsetSeconds, upstreamDate: upstreamDate, localNow: localNow)
        else { return nil }
        offset.store(updated, ordering: .relaxed)
        let significant = abs(updated) > ClockSkew.significantSeconds
        let warn = significant && !warned.exchange(true, ordering: .relaxed)
        return (updated, warn)
    }
}

/// Every upstream's clock by name, made once and kept across reloads (an upstream keeps its offset when the
/// configuration is reloaded).
final class UpstreamClocks: Sendable {
    private let clocks = Locked<[String: UpstreamClock]>([:])

    init() {}

    /// The clock of the upstream `name`, made on first use.
    func clock(named name: String) -> UpstreamClock {
        clocks.withLock { clocks in
            if let clock = clocks[name] { return clock }
            let clock = UpstreamClock(name: name)
            clocks[name] = clock
            return clock
        }
    }

    /// Every clock, sorted by name (for `/metrics`).
    var all: [UpstreamClock] {
        clocks.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }
}
