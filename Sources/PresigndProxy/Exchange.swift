import CLibevent
import PresigndHTTP1

/// One request/response pair in flight on a client connection: what was sent upstream, how far
/// each body got, and what the access log and metrics need.
final class Exchange {
    let requestID: String
    let method: String
    /// Path without the query string, for the access log.
    let logPath: String
    let bucket: String
    let upstreamIndex: Int
    let startedAt: Int
    /// The signed, encoded head, kept for one retry on a stale pooled connection.
    var encodedHead: [UInt8]
    let requestHasBody: Bool
    let clientKeepAlive: Bool
    let clientIsHTTP10: Bool

    var upstream: UpstreamConnection?
    /// Spooled upload (length-less or unwrapped aws-chunked): filled from the client, then sent.
    var spool: UploadSpool?
    /// The plan to sign once the spool is complete.
    var pendingPlan: ForwardPlan?
    /// Unwrapping a client `aws-chunked` body: decoder and the staging buffer it reads from.
    var awsDecoder: AWSChunkedDecoder?
    var awsStage: OpaquePointer?
    var awsComplete = false
    /// Response fields are forwarded as received (only the framing ones become Strings).
    var responseDecoder: ResponseDecoder = {
        var decoder = ResponseDecoder()
        decoder.forwardsRawFields = true
        return decoder
    }()
    var hasRetried = false
    var receivedResponseByte = false
    /// The last head was a 1xx; its `.end` is not the response's.
    var sawInterimHead = false
    var responseChunkedToClient = false
    var responseStatus = 0
    var requestBodyBytes = 0
    var responseBodyBytes = 0
    /// Access-log and metrics observations (ops).
    var ops = ExchangeObservation()

    init(
        requestID: String, method: String, logPath: String, bucket: String, upstreamIndex: Int, startedAt: Int,
        encodedHead: [UInt8], requestHasBody: Bool, clientKeepAlive: Bool,
        clientIsHTTP10: Bool
    ) {
        self.requestID = requestID
        self.method = method
        self.logPath = logPath
        self.bucket = bucket
        self.upstreamIndex = upstreamIndex
        self.startedAt = startedAt
        self.encodedHead = encodedHead
        self.requestHasBody = requestHasBody
        self.clientKeepAlive = clientKeepAlive
        self.clientIsHTTP10 = clientIsHTTP10
    }

    deinit {
        if let awsStage { evbuffer_free(awsStage) }
    }
}
