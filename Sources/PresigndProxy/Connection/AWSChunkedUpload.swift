import PresigndHTTP1
import PresigndIO
import PresigndSigV4

/// One streamed `aws-chunked` upload (issue 21): the decoder over the client's body, the state machine that
/// decides what goes upstream when, the checksum computed on the way, and the buffers it needs. Driven by
/// `ClientConnection+AWSChunked`.
final class AWSChunkedUpload {
    let plan: AWSChunkedPlan
    var machine: AWSChunkedUploadStateMachine
    var decoder = AWSChunkedDecoder()
    /// Client body bytes waiting to be decoded.
    let stage: OwnedIOBuffer
    /// Payload bytes held back until the trailer has been checked.
    let held: OwnedIOBuffer
    let checksum: PayloadChecksum?
    /// A re-framed body (`plan.reframes`): where the current outgoing chunk stands.
    var framer: AWSChunkedFramer

    init(_ plan: AWSChunkedPlan) throws(ProxyError) {
        self.plan = plan
        machine = AWSChunkedUploadStateMachine(decodedLength: plan.decodedLength, checksum: plan.checksum)
        framer = AWSChunkedFramer(decodedLength: plan.decodedLength, chunkSize: AWSChunkedPlan.chunkSize)
        do {
            stage = try OwnedIOBuffer()
            held = try OwnedIOBuffer()
        } catch {
            throw .internalError("\(error)")
        }
        do {
            checksum = try plan.checksum.map { algorithm throws(SigV4Error) in try PayloadChecksum(algorithm) }
        } catch {
            throw .internalError("\(error)")
        }
    }
}

/// Frames a decoded payload again as unsigned aws-chunked (SIGV4-S3-RULES §5.2) in chunks of a fixed size, so the
/// encoded length is known before the first byte (`AWSChunked.unsignedTrailerEncodedLength`). Pure counting.
struct AWSChunkedFramer: Equatable {
    let decodedLength: Int
    let chunkSize: Int
    /// Payload bytes framed so far.
    private(set) var framed = 0
    /// Bytes left in the chunk being written; 0 between chunks.
    private(set) var chunkRemaining = 0

    init(decodedLength: Int, chunkSize: Int) {
        self.decodedLength = decodedLength
        self.chunkSize = chunkSize
    }

    /// One step of framing up to `count` payload bytes: the chunk header to write first (if a chunk starts), how
    /// many bytes to move, and whether the chunk's closing CRLF follows them.
    mutating func next(_ count: Int) -> (header: Int?, take: Int, closesChunk: Bool) {
        var header: Int? = nil
        if chunkRemaining == 0 {
            chunkRemaining = min(chunkSize, decodedLength - framed)
            header = chunkRemaining
        }
        let take = min(count, chunkRemaining)
        chunkRemaining -= take
        framed += take
        return (header, take, chunkRemaining == 0)
    }
}
