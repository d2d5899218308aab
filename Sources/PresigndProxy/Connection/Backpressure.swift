/// When a side of a connection may be read, given how full the output it feeds is (DESIGN §2: memory per
/// connection is bounded by the watermarks). Hysteresis between the two watermarks: reading stops once the
/// output passes `high` and starts again only when it has drained to `low`, so a transfer moves in large steps
/// instead of toggling the read event for every piece.
struct Backpressure: Equatable {
    var low: Int
    var high: Int

    /// Whether to read now, for a side that `isReading` and an output holding `queued` bytes.
    func allowsReading(isReading: Bool, queued: Int) -> Bool {
        queued <= (isReading ? high : low)
    }
}
