import PresigndHTTP1
import PresigndIO
import PresigndSigV4

/// Spooled uploads: length-less bodies and unwrapped `aws-chunked` bodies go to a temporary file,
/// then upstream with `Content-Length` (S3 and R2 refuse length-less PUTs; R2 refuses streaming
/// payloads, SIGV4-S3-RULES §5.3).
extension ClientConnection {
    /// Prepares an exchange whose body is spooled before anything is sent upstream.
    func startSpool(_ exchange: Exchange, plan: ForwardPlan, limit: Int, declaredLength: Int?) throws(ProxyError) {
        do {
            exchange.spool = try UploadSpool(
                directory: settings.spoolDirectory, limit: limit, budget: worker.spoolBudget,
                declaredLength: declaredLength)
        } catch {
            if case .slowDown = error { worker.metrics.limits.spoolRequestShed() }
            throw error
        }
        exchange.pendingPlan = plan
        if case .spool(true, _) = plan.body {
            exchange.awsDecoder = AWSChunkedDecoder()
            do {
                exchange.awsStage = try OwnedIOBuffer()
            } catch {
                throw .internalError("\(error)")
            }
        }
    }

    /// Takes `count` body bytes from the client input into the spool.
    func spoolRequestBody(_ exchange: Exchange, count: Int) {
        exchange.requestBodyBytes += count
        do throws(ProxyError) {
            if let stage = exchange.awsStage?.buffer {
                moveBytes(from: input, to: stage, count: count)
                try unwrapAWSChunked(exchange)
            } else if let spool = exchange.spool {
                try spool.append(from: input, count: count)
            }
        } catch {
            if case .slowDown = error { worker.metrics.limits.spoolRequestShed() }
            handle(.failed(error))
        }
    }

    private func unwrapAWSChunked(_ exchange: Exchange) throws(ProxyError) {
        guard let stage = exchange.awsStage?.buffer, var decoder = exchange.awsDecoder, let spool = exchange.spool
        else {
            return
        }
        defer { exchange.awsDecoder = decoder }
        while !exchange.awsComplete {
            let output: DecoderOutput
            do {
                output = try stage.withFirstSegment { segment, available throws(HTTPParseError) in
                    try decoder.next(segment, available: available)
                }
            } catch {
                throw .badRequest("malformed aws-chunked body (\(error))")
            }
            switch output {
            case .needMore(let consumed):
                stage.drain(consumed)
                if consumed == 0 { return }
            case .body(let skip, let count):
                stage.drain(skip)
                try spool.append(from: stage, count: count)
                if skip == 0 && count == 0 { return }
            case .end(let consumed):
                stage.drain(consumed)
                exchange.awsComplete = true
            case .head:
                throw .badRequest("malformed aws-chunked body")
            }
        }
    }

    /// The client's body is complete: sign with the spooled length (and the trailer's checksum),
    /// connect, and start sending the file.
    func sendSpooledRequest() {
        guard let exchange, let spool = exchange.spool, var plan = exchange.pendingPlan else { return }
        do throws(ProxyError) {
            if exchange.awsStage != nil {
                try unwrapAWSChunked(exchange)
                guard exchange.awsComplete else { throw .badRequest("the aws-chunked body ended early") }
                if case .spool(_, let decodedLength?) = plan.body, decodedLength != spool.size {
                    throw .badRequest("x-amz-decoded-content-length does not match the body")
                }
                // The trailer's checksum travels as a header, where S3 and R2 accept it.
                for (name, value) in exchange.awsDecoder?.trailers ?? HTTPHeaders()
                where ASCII.hasLowercasePrefix(name, "x-amz-checksum-") {
                    plan.request.headers.append((name, value))
                }
            }
            try spool.finish()
            if let policy = plan.deleteKeysPolicy {
                _ = try RequestRewriter.checkDeleteBody(try spool.contents(), policy: policy)
            }
            plan.request.headers.append(("Content-Length", String(spool.size)))
            exchange.retry.plan = plan
            try signAttempt(exchange)
        } catch {
            handle(.failed(error))
            return
        }
        exchange.pendingPlan = nil
        attachUpstream(fresh: false)
    }

    /// Hands spooled bytes to the upstream up to the high watermark; drops the spool when done.
    func pumpSpool() {
        guard let exchange, let spool = exchange.spool, exchange.pendingPlan == nil,
            let upstream = exchange.upstream
        else { return }
        do {
            if try spool.fill(upstream.output, upTo: settings.highWatermark) {
                // Kept until the exchange ends: a retry sends it again.
                exchange.retry.sentSpool = spool
                exchange.spool = nil
            }
        } catch {
            // The head is out: the upstream connection is dropped, so it cannot take a short body as complete.
            handle(.failed(error))
        }
    }
}
