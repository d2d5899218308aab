import PresigndHTTP1

/// What an exchange keeps so that its request can be sent again (issue 21 §3, §4).
struct ExchangeRetryState {
    /// The request as signed, signed again with a fresh date for every attempt.
    var plan: ForwardPlan?
    /// The signing time of the attempt in flight (epoch seconds, the upstream's clock offset included).
    var signedAt = 0
    /// The streamed body so far, while it fits `retry_body_buffer` (nil: none kept; the body then cannot be sent
    /// again once a byte of it has left).
    var body: [UInt8]?
    /// A spooled body already handed to the upstream, kept until the exchange ends so a retry can send it again.
    var sentSpool: UploadSpool?
    /// The one retry after a clock-skew rejection was made.
    var correctedClock = false
    /// An error answer being read whole before the policy decides to retry it or pass it on.
    var held: HeldAnswer?
}

/// An upstream's error answer, read whole (up to `limit`) before anything of it goes to the client: its S3 error
/// code says whether it is worth another attempt (`SlowDown`, `InternalError`, a skewed clock).
struct HeldAnswer {
    /// Error bodies are small; one larger than this is passed on as it is.
    static let limit = 16 * 1024

    var head: ResponseHead
    var body: [UInt8] = []

    /// The `<Code>` of an S3 XML error body, if it has one.
    var s3ErrorCode: String? {
        let open = Array("<Code>".utf8)
        let close = Array("</Code>".utf8)
        guard let start = Self.find(open, in: body[...]) else { return nil }
        let valueStart = start + open.count
        guard let end = Self.find(close, in: body[valueStart...]) else { return nil }
        return String(decoding: body[valueStart..<end], as: UTF8.self)
    }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
