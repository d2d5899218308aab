import PresigndHTTP1

/// Plays the I/O layer's part over a byte string for `HTTP1Fuzz`: shows a decoder the first segment of a
/// simulated buffer, drains and moves bytes as told, and checks every output against the contract.
struct FuzzDriver<Head: Equatable> {
    enum Step {
        case needMore(consumed: Int)
        case head(Head, consumed: Int)
        case body(skip: Int, count: Int)
        case end(consumed: Int)
    }

    enum Event: Equatable {
        case head(Head)
        case body([UInt8])
        case end
        case failed(HTTPParseError)
    }

    /// At most `segment` bytes are shown as the first segment; bytes arrive `feed` at a time.
    var segment = Int.max
    var feed = Int.max
    /// Stop after the first `.end` (a body-only decoder stays ended).
    var stopsAtEnd = false

    func run(
        _ data: UnsafeBufferPointer<UInt8>,
        _ step: (UnsafeRawBufferPointer, Int) throws(HTTPParseError) -> Step
    ) -> [Event] {
        var events: [Event] = []
        var start = 0
        var arrived = min(feed, data.count)
        var iterations = 0
        while true {
            iterations += 1
            precondition(iterations <= 4 * data.count + 16, "decoder made no progress")
            let available = arrived - start
            let shown = min(segment, available)
            let input = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: data[start..<(start + shown)]))
            let output: Step
            do throws(HTTPParseError) {
                output = try step(input, available)
            } catch {
                events.append(.failed(error))
                return events
            }
            switch output {
            case .needMore(let consumed):
                precondition(consumed >= 0 && consumed <= shown, "needMore consumed beyond the segment")
                precondition(consumed > 0 || available == 0, "needMore(0) while input was offered")
                start += consumed
                if consumed == 0 {
                    guard arrived < data.count else { return events }
                    arrived += min(feed, data.count - arrived)
                }
            case .head(let head, let consumed):
                precondition(consumed > 0 && consumed <= shown, "head consumed beyond the segment")
                start += consumed
                events.append(.head(head))
            case .body(let skip, let count):
                precondition(skip >= 0 && count >= 0 && skip <= shown, "body skip beyond the segment")
                precondition(skip + count <= available, "body beyond the buffer")
                precondition(skip > 0 || count > 0, "empty body output")
                let bytes = Array(data[(start + skip)..<(start + skip + count)])
                if case .body(let previous) = events.last {
                    events[events.count - 1] = .body(previous + bytes)
                } else if count > 0 {
                    events.append(.body(bytes))
                }
                start += skip + count
            case .end(let consumed):
                precondition(consumed >= 0 && consumed <= shown, "end consumed beyond the segment")
                precondition(events.last != .end, "two ends without a head")
                start += consumed
                events.append(.end)
                if stopsAtEnd { return events }
            }
        }
    }
}
