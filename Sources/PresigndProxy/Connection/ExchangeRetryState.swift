import PresigndHTTP1
import PresigndPolicy

/// What an exchange keeps so that its request can be sent again (issue 21 §3, §4).
struct ExchangeRetryState {
    /// The request as signed, signed again with a fresh date for every attempt (kept out of line, `OutOfLine`).
    var plan: ForwardPlan? {
        get { planBox?.value }
        set { planBox = newValue.map(OutOfLine.init) }
    }
    private var planBox: OutOfLine<ForwardPlan>?
    /// The signing time of the attempt in flight (epoch seconds, the upstream's clock offset included).
    var signedAt = 0
    /// The streamed body so far, while it fits `retry_body_buffer` (nil: none kept; the body then cannot be sent
    /// again once a byte of it has left).
    var body: [UInt8]?
    /// A spooled body already handed to the upstream, kept until the exchange ends so a retry can send it again.
    var sentSpool: UploadSpool?
    /// The one retry after a clock-skew rejection was made.
    var correctedClock = false
    /// The operation may be answered `200 OK` with an `<Error>` body (`S3Operation.mayFailAfterSuccessStatus`):
    /// its 200 answers are held and read like error answers.
    var checksSuccessBody = false
    /// An answer being read whole before the policy decides to retry it or pass it on.
    var held: HeldAnswer?
    /// The body read of an answer passed on after all, until its head is written.
    var heldBody: [UInt8]?
}

/// An upstream answer read whole (up to `limit`) before anything of it goes to the client: an error status (its
/// S3 error code says whether it is worth another attempt: `SlowDown`, `InternalError`, a skewed clock), or the
/// `200 OK` of an operation S3 may still fail in the body (CompleteMultipartUpload, CopyObject, UploadPartCopy).
struct HeldAnswer {
    /// Error bodies and the XML results of those operations are small; a body larger than this is passed on as it
    /// is, and the rest of it streams.
    static let limit = 16 * 1024
    /// The longest an answer is held (milliseconds). S3 keeps a slow copy's connection alive with whitespace after
    /// its 200 head; held, that padding would not reach the client, whose SDK times a silent read out (30 s in
    /// the AWS SDK for Java 2, 60 s in botocore). Past this, the head and what came of the body go to the client
    /// and the rest streams: the client's SDK reads a late `<Error>` itself, as it does without presignd.
    static let maxHoldMilliseconds = 10_000

    var head: ResponseHead
    var body: [UInt8] = []

    /// The `<Code>` of an S3 XML error: a document whose root element is `Error` (the path is read from the root,
    /// so a result whose root is another element has none). Nil for anything else (a result, HTML from a load
    /// balancer, XML `XMLScanner` refuses).
    var s3ErrorCode: String? {
        guard let tokens = try? XMLScanner.tokens(body),
            let codes = try? XMLScanner.texts(tokens, at: ["Error", "Code"]), codes.count == 1
        else { return nil }
        return codes[0]
    }
}
