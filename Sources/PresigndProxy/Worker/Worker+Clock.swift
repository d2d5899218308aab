import PresigndHTTP1
import PresigndSigV4

/// The upstreams' clocks as a worker uses them (issue 21 §4): signing times corrected by the offset, and the
/// offset kept up to date from `Date` response headers.
extension Worker {
    /// The clock of upstream `index` under `exchangeSettings` (an exchange still running under the configuration
    /// before a reload resolves it by name).
    func clock(upstream index: Int, settings exchangeSettings: ProxySettings) -> UpstreamClock {
        exchangeSettings === settings
            ? upstreamClocks[index] : clocks.clock(named: exchangeSettings.upstreams[index].name)
    }

    /// The signing time for upstream `index`: the loop's time plus that upstream's clock offset.
    func signingDate(upstream index: Int, settings exchangeSettings: ProxySettings) -> AmzDate {
        signingDate(offsetSeconds: clock(upstream: index, settings: exchangeSettings).offsetSeconds)
    }

    /// Reads the `Date` of a response head from upstream `index` and moves the shared offset when it differs.
    /// Ordinary responses are sampled once a second per upstream; `always` reads it (an error answer that may be
    /// a clock-skew rejection). Returns the upstream's date when it was read.
    @discardableResult
    func observeUpstreamDate(
        _ head: ResponseHead, upstream index: Int, settings exchangeSettings: ProxySettings, always: Bool
    ) -> Int? {
        let now = nowMicroseconds() / 1_000_000
        let current = exchangeSettings === settings
        if !always && current && lastClockSample[index] == now { return nil }
        if current {
            var samples = lastClockSample  // taken out and put back: no access to it spans a call
            lastClockSample = []
            samples[index] = now
            lastClockSample = samples
        }
        guard let text = head.firstValue(ofLowercasedField: "date"), let date = AmzDate(httpDate: text) else {
            return nil
        }
        let clock = clock(upstream: index, settings: exchangeSettings)
        if let update = clock.observe(upstreamDate: date.epochSeconds, localNow: now) {
            let offset = String(update.offset)
            if update.warn {
                logger.warning(
                    "Upstream clock differs from the local clock by more than a minute; signing with the upstream's time",
                    metadata: ["upstream": clock.name, "clock.offset.s": offset])
            } else {
                logger.info(
                    "Upstream clock offset changed", metadata: ["upstream": clock.name, "clock.offset.s": offset])
            }
        }
        return date.epochSeconds
    }
}
