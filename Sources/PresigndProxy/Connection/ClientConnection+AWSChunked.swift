import PresigndHTTP1
import PresigndIO
import PresigndSigV4

/// Streamed `aws-chunked` uploads (issue 21): the client's chunks are decoded as they arrive and the payload goes
/// upstream at once (a plain body, or framed again for S3), never to the spool. `AWSChunkedUploadStateMachine`
/// decides; this file moves the bytes, computes the checksum on the way, and reports.
extension ClientConnection {
    /// Takes `count` client body bytes of a streamed aws-chunked upload.
    func streamAWSChunked(_ exchange: Exchange, _ upload: AWSChunkedUpload, count: Int) {
        exchange.requestBodyBytes += count
        guard upload.machine.takesBytes else {
            input.drain(count)  // refused: what the client still sends is read and dropped
            return
        }
        if upload.machine.state == .verified {
            input.drain(count)
            apply(.bytesAfterEnd, exchange, upload)
            return
        }
        moveBytes(from: input, to: upload.stage.buffer, count: count)
        decodeAWSChunked(exchange, upload)
    }

    /// The client's body ended (the request decoder's `.end`). Returns false when the upload was refused, which
    /// `apply` has already reported.
    func finishAWSChunked(_ exchange: Exchange, _ upload: AWSChunkedUpload) -> Bool {
        if upload.machine.takesBytes { apply(.clientBodyEnded, exchange, upload) }
        return upload.machine.state == .released
    }

    private func decodeAWSChunked(_ exchange: Exchange, _ upload: AWSChunkedUpload) {
        let stage = upload.stage.buffer
        while upload.machine.isReceiving {
            let output: DecoderOutput
            do {
                output = try stage.withFirstSegment { segment, available throws(HTTPParseError) in
                    try upload.decoder.next(segment, available: available)
                }
            } catch {
                apply(.malformed("\(error)"), exchange, upload)
                return
            }
            switch output {
            case .needMore(let consumed):
                stage.drain(consumed)
                if consumed == 0 { return }
            case .body(let skip, let count):
                stage.drain(skip)
                if let checksum = upload.checksum {
                    do {
                        try stage.forEachSegment(prefix: count) { (bytes) throws(SigV4Error) in
                            try checksum.update(bytes)
                        }
                    } catch {
                        apply(.malformed("checksum failed: \(error)"), exchange, upload)
                        return
                    }
                }
                apply(.payload(count: count), exchange, upload)
                if skip == 0 && count == 0 { return }
            case .end(let consumed):
                stage.drain(consumed)
                apply(trailerEvent(upload), exchange, upload)
                if !stage.isEmpty { apply(.bytesAfterEnd, exchange, upload) }
            case .head:
                apply(.malformed("a head inside the body"), exchange, upload)
            }
        }
    }

    /// What the trailer section says, against the checksum of the bytes that passed.
    private func trailerEvent(_ upload: AWSChunkedUpload) -> AWSChunkedUploadStateMachine.Event {
        let trailers = upload.decoder.trailers
        var undeclared = false
        for (name, _) in trailers {
            if let algorithm = ChecksumAlgorithm(fieldName: name), algorithm != upload.plan.checksum {
                undeclared = true
            }
        }
        let received = upload.plan.checksum.flatMap { trailers[$0.fieldName] }
        let computed = try? upload.checksum?.finishBase64()
        return .complete(trailerChecksum: received, computed: computed, undeclaredChecksum: undeclared)
    }

    private func apply(
        _ event: AWSChunkedUploadStateMachine.Event, _ exchange: Exchange, _ upload: AWSChunkedUpload
    ) {
        for action in upload.machine.handle(event) {
            switch action {
            case .forward(let count):
                sendPayload(from: upload.stage.buffer, count: count, upload, exchange)
            case .hold(let count):
                moveBytes(from: upload.stage.buffer, to: upload.held.buffer, count: count)
            case .release:
                sendPayload(from: upload.held.buffer, count: upload.held.buffer.count, upload, exchange)
                if upload.plan.reframes, let checksum = upload.plan.checksum, let output = exchange.upstream?.output {
                    // The final chunk and the trailer (SIGV4-S3-RULES §5.2), the value the bytes were checked against.
                    let value = upload.decoder.trailers[checksum.fieldName] ?? ""
                    appendUpstream(Array("0\r\n\(checksum.fieldName):\(value)\r\n\r\n".utf8), to: output)
                }
            case .fail(let error):
                upload.stage.buffer.drain(upload.stage.buffer.count)
                upload.held.buffer.drain(upload.held.buffer.count)
                // The held bytes never go: dropping the upstream connection leaves it an incomplete body.
                handle(.failed(error))
            }
        }
    }

    /// Moves payload bytes upstream, framed again when the plan says so.
    private func sendPayload(from source: IOBuffer, count: Int, _ upload: AWSChunkedUpload, _ exchange: Exchange) {
        guard let output = exchange.upstream?.output else {
            source.drain(count)
            return
        }
        guard upload.plan.reframes else {
            moveBytes(from: source, to: output, count: count)
            return
        }
        var left = count
        while left > 0 {
            let step = upload.framer.next(left)
            if let size = step.header {
                var header: [UInt8] = []
                HTTPEncoder.chunkHeader(size: size, into: &header)
                appendUpstream(header, to: output)
            }
            moveBytes(from: source, to: output, count: step.take)
            left -= step.take
            if step.closesChunk { appendUpstream(Array("\r\n".utf8), to: output) }
        }
    }

    private func appendUpstream(_ bytes: [UInt8], to output: IOBuffer) {
        do { try output.append(bytes) } catch { handle(.failed(.internalError("\(error)"))) }
    }
}
