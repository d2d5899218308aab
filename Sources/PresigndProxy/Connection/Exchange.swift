import PresigndHTTP1
import PresigndIO

/// One request/response pair in flight on a client connection: what was sent upstream, how far
/// each body got, and what the access log and metrics need.
final class Exchange {
    let id: RequestID
    var requestID: String { id.text }
    let method: String
    /// Path without the query string, for the access log.
    let logPath: String
    let bucket: String
    let upstreamIndex: Int
    /// The signed, encoded head of the next attempt, until `attachUpstream` sends it (then empty: its buffer went
    /// back to the worker).
    var encodedHead: [UInt8]
    let requestHasBody: Bool
    let clientKeepAlive: Bool
    let clientIsHTTP10: Bool

    var upstream: UpstreamConnection?
    /// Spooled upload (length-less or unwrapped aws-chunked): filled from the client, then sent.
    var spool: UploadSpool?
    /// The plan to sign once the spool is complete.
    var pendingPlan: ForwardPlan? {
        get { pendingPlanBox?.value }
        set { pendingPlanBox = newValue.map(OutOfLine.init) }
    }
    private var pendingPlanBox: OutOfLine<ForwardPlan>?
    /// Unwrapping a client `aws-chunked` body: decoder and the staging buffer it reads from.
    var awsDecoder: AWSChunkedDecoder? {
        get { awsDecoderBox?.value }
        set { awsDecoderBox = newValue.map(OutOfLine.init) }
    }
    private var awsDecoderBox: OutOfLine<AWSChunkedDecoder>?
    var awsStage: OwnedIOBuffer?
    var awsComplete = false
    /// A streamed `aws-chunked` upload (decoded length known): decoded, checked and sent as it arrives.
    var awsChunkedUpload: AWSChunkedUpload?
    /// Decodes the current upstream connection's response (a new one per attempt).
    var responseDecoder = Exchange.makeResponseDecoder()
    /// The final response head, from its arrival until the state machine has it written.
    var responseHead: ResponseHead?
    var responseStatus = 0
    var requestBodyBytes = 0
    var responseBodyBytes = 0
    /// Access-log and metrics observations (ops).
    var ops: ExchangeObservation
    /// What a retry needs (issue 21 §3, §4): the plan to sign again, the body to send again, the answer held.
    var retry = ExchangeRetryState()
    /// The cached objects this request makes stale: dropped when it is sent and again when its answer arrives.
    var cacheInvalidation: CacheInvalidation?
    /// A revalidation of a cached object in flight; after its 304, the slices the answer's body is sent from
    /// (queued after the head by `writeResponseHead`).
    var cacheRevalidation: CacheRevalidation?
    var cachedBody: OpenedSlices?
    /// A composed answer's present slices after the fetched run, sent when the upstream's body ends.
    var cachedSuffix: OpenedSlices?
    /// After a 304, the slices of a large cached answer that follow `cachedBody`, queued as the output drains
    /// once the upstream is done (`ConnectionEvent.revalidatedBodyFollows`).
    var cachedRest: CachedBodySender?
    /// A GET the cache missed: its answer's slices are filled as the body streams (`CacheFill`).
    var cacheFill: CacheFill?

    init(
        id: RequestID, method: String, logPath: String, bucket: String, upstreamIndex: Int, startedAtMicros: Int,
        encodedHead: [UInt8], requestHasBody: Bool, clientKeepAlive: Bool,
        clientIsHTTP10: Bool
    ) {
        self.id = id
        self.method = method
        self.logPath = logPath
        self.bucket = bucket
        self.upstreamIndex = upstreamIndex
        self.ops = ExchangeObservation(startedAtMicros: startedAtMicros)
        self.encodedHead = encodedHead
        self.requestHasBody = requestHasBody
        self.clientKeepAlive = clientKeepAlive
        self.clientIsHTTP10 = clientIsHTTP10
    }

    /// Response fields are forwarded as received (only the framing ones become Strings).
    static func makeResponseDecoder() -> ResponseDecoder {
        var decoder = ResponseDecoder()
        decoder.forwardsRawFields = true
        return decoder
    }

    /// `min_body_rate`'s window for this exchange (issue 20).
    var rateMeter = BodyRateMeter()
}
