import PresigndSigV4

/// An `aws-chunked` upload decoded as it arrives and streamed upstream (issue 21): payload bytes pass on at once,
/// except the last `holdBack` of them, which wait until the aws-chunked body is complete, as long as
/// `x-amz-decoded-content-length` said, its trailer checksum matches, and the client's body has ended there. On
/// any failure the held bytes never go: the upstream sees an incomplete body and stores nothing. Pure: it counts
/// bytes and compares checksums the driver (`ClientConnection+AWSChunked`) computed; tests drive it event by event.
struct AWSChunkedUploadStateMachine: Equatable {
    enum State: Equatable {
        /// Decoding; `decoded` payload bytes so far (forwarded or held).
        case receiving(decoded: Int)
        /// The aws-chunked body is complete and its checksum matched; the client's body must end here.
        case verified
        /// The client's body ended after a verified aws-chunked body: the held bytes went upstream.
        case released
        /// Refused: nothing more goes upstream.
        case failed
    }

    enum Event: Equatable {
        /// The decoder produced `count` more payload bytes.
        case payload(count: Int)
        /// The final chunk and the trailer section were read. `trailerChecksum`: the value of the declared
        /// checksum field in the trailer (nil when absent); `computed`: that checksum of the bytes received.
        /// `undeclaredChecksum`: the trailer carries an `x-amz-checksum-*` field `x-amz-trailer` did not name.
        case complete(trailerChecksum: String?, computed: String?, undeclaredChecksum: Bool)
        /// The chunk framing is malformed (a bad chunk header, bytes after the end).
        case malformed(String)
        /// The client's body (Content-Length or chunked framing) ended.
        case clientBodyEnded
        /// Client body bytes arrived after the aws-chunked body's end.
        case bytesAfterEnd
    }

    enum Action: Equatable {
        /// Send this many payload bytes upstream now.
        case forward(Int)
        /// Keep this many back.
        case hold(Int)
        /// Send the held bytes and end the upstream body.
        case release
        /// Refuse the upload: drop the upstream connection, answer the client.
        case fail(ProxyError)
    }

    private(set) var state = State.receiving(decoded: 0)
    let decodedLength: Int
    /// The checksum `x-amz-trailer` declared, if any.
    let checksum: ChecksumAlgorithm?
    /// Payload bytes held until the end: one is enough to keep the upstream's body incomplete.
    let holdBack: Int

    init(decodedLength: Int, checksum: ChecksumAlgorithm?, holdBack: Int = 1) {
        precondition(decodedLength > 0, "an empty aws-chunked body is spooled, not streamed")
        self.decodedLength = decodedLength
        self.checksum = checksum
        self.holdBack = min(max(holdBack, 1), decodedLength)
    }

    var isReceiving: Bool {
        if case .receiving = state { return true }
        return false
    }

    /// Client body bytes are still taken (decoded, or checked for being extra).
    var takesBytes: Bool { isReceiving || state == .verified }

    mutating func handle(_ event: Event) -> [Action] {
        if state == .verified {
            switch event {
            case .clientBodyEnded:
                state = .released
                return [.release]
            case .bytesAfterEnd:
                return fail(.badRequest("bytes follow the aws-chunked trailer"))
            default:
                return []
            }
        }
        guard case .receiving(let decoded) = state else { return [] }
        switch event {
        case .payload(let count):
            let total = decoded + count
            guard total <= decodedLength else {
                return fail(.badRequest("the aws-chunked body is longer than x-amz-decoded-content-length"))
            }
            state = .receiving(decoded: total)
            let forwardable = max(0, min(total, decodedLength - holdBack) - decoded)
            var actions: [Action] = []
            if forwardable > 0 { actions.append(.forward(forwardable)) }
            if count > forwardable { actions.append(.hold(count - forwardable)) }
            return actions
        case .complete(let trailerChecksum, let computed, let undeclared):
            guard decoded == decodedLength else {
                return fail(.badRequest("the aws-chunked body is shorter than x-amz-decoded-content-length"))
            }
            guard !undeclared else {
                return fail(.badRequest("the aws-chunked trailer carries a checksum x-amz-trailer did not declare"))
            }
            if let checksum {
                guard let trailerChecksum else {
                    return fail(.badDigest("the \(checksum.fieldName) trailer is missing"))
                }
                guard trailerChecksum == computed else {
                    return fail(.badDigest("the \(checksum.fieldName) trailer does not match the body"))
                }
            }
            state = .verified
            return []
        case .bytesAfterEnd:
            return []  // the decoder reports these as malformed while it reads
        case .malformed(let detail):
            return fail(.badRequest("malformed aws-chunked body (\(detail))"))
        case .clientBodyEnded:
            if decoded < decodedLength {
                return fail(.badRequest("the aws-chunked body ended before x-amz-decoded-content-length bytes"))
            }
            if let checksum { return fail(.badDigest("the body ended before its \(checksum.fieldName) trailer")) }
            return fail(.badRequest("the aws-chunked body ended before its final chunk"))
        }
    }

    private mutating func fail(_ error: ProxyError) -> [Action] {
        state = .failed
        return [.fail(error)]
    }
}
