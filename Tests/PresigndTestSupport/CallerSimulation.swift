import PresigndHTTP1

/// How the simulated caller offers bytes: all at once, arriving one byte at a time, or fully buffered but in
/// short segments (a libevent buffer's chain), so every decoder case runs each way.
public enum Feed: CaseIterable, CustomStringConvertible, Sendable {
    case whole, oneByteAtATime, threeByteSegments

    public var segment: Int { self == .threeByteSegments ? 3 : Int.max }
    public var arrival: Int { self == .oneByteAtATime ? 1 : Int.max }
    public var description: String { "\(self == .whole ? "whole" : self == .oneByteAtATime ? "1-byte" : "3-byte-seg")" }
}

/// One decoded message as the caller saw it (made by the decode helpers here, read by the tests).
public struct Message<Head: Equatable>: Equatable {
    public var head: Head
    public var framing: BodyFraming
    public var isKeepAlive: Bool
    public var expectsContinue = false
    public var body: [UInt8] = []
    public var trailers = HTTPHeaders()
    public var isComplete = false

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// Everything decoded from one input, and the error that stopped it, if any.
public struct Transcript<Head: Equatable>: Equatable {
    public var messages: [Message<Head>] = []
    public var error: HTTPParseError?
}

/// What a decoder said, with the decoder state the caller reads at that moment.
public enum Said<Head: Equatable> {
    case needMore(Int)
    case head(Message<Head>, Int)
    case body(skip: Int, count: Int)
    case end(Int, trailers: HTTPHeaders)
}

/// Plays the I/O layer: keeps `data` as its buffer, shows the decoder a first segment, drains framing bytes and
/// moves body bytes exactly as told, and checks the contract on every output.
public func simulate<Head: Equatable>(
    _ data: [UInt8], feed: Feed, startingWith initial: [Message<Head>] = [],
    _ next: (UnsafeRawBufferPointer, Int) throws(HTTPParseError) -> Said<Head>
) -> Transcript<Head> {
    var transcript = Transcript<Head>(messages: initial)
    var start = 0
    var arrived = min(feed.arrival, data.count)
    var calls = 0
    while calls < 4 * data.count + 16 {
        calls += 1
        let available = arrived - start
        let shown = min(feed.segment, available)
        let result = data.withUnsafeBytes { buffer in
            Result { () throws(HTTPParseError) in
                try next(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + shown)]), available)
            }
        }
        guard case .success(let said) = result else {
            if case .failure(let error) = result { transcript.error = error }
            return transcript
        }
        switch said {
        case .needMore(let consumed):
            precondition(consumed <= shown && (consumed > 0 || available == 0))
            start += consumed
            if consumed == 0 {
                guard arrived < data.count else { return transcript }
                arrived += min(feed.arrival, data.count - arrived)
            }
        case .head(let message, let consumed):
            precondition(consumed > 0 && consumed <= shown)
            start += consumed
            transcript.messages.append(message)
        case .body(let skip, let count):
            precondition(skip <= shown && skip + count <= available && (skip > 0 || count > 0))
            transcript.messages[transcript.messages.count - 1].body += data[(start + skip)..<(start + skip + count)]
            start += skip + count
        case .end(let consumed, let trailers):
            precondition(consumed <= shown)
            start += consumed
            transcript.messages[transcript.messages.count - 1].isComplete = true
            transcript.messages[transcript.messages.count - 1].trailers = trailers
        }
    }
    preconditionFailure("decoder made no progress")
}
