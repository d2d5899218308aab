import CLibevent
import PresigndHTTP1

/// The response side: decode the upstream's bytes and stream them to the client.
extension ClientConnection: UpstreamConnectionDelegate {
    func upstreamReadable(_ connection: UpstreamConnection) {
        processUpstreamInput()
        settle()
    }

    func upstreamDrained(_ connection: UpstreamConnection) {
        settle()
    }

    func upstreamEnded(_ connection: UpstreamConnection, _ failure: UpstreamFailure) {
        defer { settle() }
        guard let exchange, exchange.upstream === connection else {
            connection.free()
            return
        }
        // Bytes may still sit in the input buffer (EOF arrives with the last read).
        processUpstreamInput()
        guard self.exchange === exchange, !isClosed else { return }
        if responsePhase == .body, failure == .closed, exchange.responseDecoder.finishOnClose() {
            completeResponse()
            return
        }
        connection.free()
        exchange.upstream = nil
        if exchange.isRetryableAfter(connection) {
            exchange.hasRetried = true
            worker.logger.debug("Retrying on a fresh upstream connection", metadata: ["request.id": exchange.requestID])
            attachUpstream(fresh: true)
            return
        }
        guard !exchange.receivedResponseByte || responsePhase == .head else {
            close()  // mid-body: abort, never a silently truncated "complete" body
            return
        }
        let error: ProxyError
        switch failure {
        case .dns(let reason): error = .upstreamDNS(reason)
        case .connect(let reason): error = .upstreamConnect(reason)
        case .tls(let reason): error = .upstreamTLS(reason)
        case .timeout: error = .upstreamTimeout
        case .closed: error = .upstreamProtocol("the connection closed before a complete response")
        }
        worker.logger.warning(
            "Upstream failed",
            metadata: [
                "request.id": exchange.requestID, "upstream": settings.upstreams[exchange.upstreamIndex].name,
                "error": error.statusAndCode.code, "reason": error.message,
            ])
        failBeforeResponse(error)
    }

    /// Answers an error for the current exchange before any response byte went to the client.
    func failBeforeResponse(_ error: ProxyError) {
        guard let exchange else { return }
        exchange.upstream?.free()
        exchange.upstream = nil
        self.exchange = nil
        responsePhase = .none
        respondLocally(
            error: error, method: exchange.method, resource: exchange.logPath,
            closing: requestPhase != .done || closeAfterResponse, isHTTP10: exchange.clientIsHTTP10,
            exchange: exchange)
    }

    func processUpstreamInput() {
        // One strong reference to the exchange for the whole loop, not a retain and a release per decoded step
        // (a step may end the exchange); the upstream is only borrowed: the loop ends as soon as the connection's
        // exchange or the exchange's upstream is another (or none), so it is used only while the exchange holds it.
        guard let exchange, let upstream = exchange.borrowedUpstream else { return }
        let exchangeID = ObjectIdentifier(exchange)
        let input = upstream.with { $0.input }
        while !isClosed, self.exchange.map(ObjectIdentifier.init) == exchangeID, exchange.borrowedUpstream == upstream {
            if EvBuffer.length(output) > watermarks.high {
                upstreamReadPaused = true
                upstream.with { $0.disableReading() }
                return
            }
            // Decoded even when empty: a finished body still owes its `.end`.
            let decoded: ResponseDecoderOutput
            do {
                decoded = try EvBuffer.withFirstSegment(input) { segment, available throws(HTTPParseError) in
                    try exchange.responseDecoder.next(segment, available: available, requestMethod: exchange.method)
                }
            } catch {
                if exchange.receivedResponseByte && responsePhase == .body {
                    close()
                } else {
                    failBeforeResponse(.upstreamProtocol("\(error)"))
                }
                return
            }
            if EvBuffer.length(input) > 0 || decoded != .needMore(consumed: 0) { exchange.receivedResponseByte = true }
            switch decoded {
            case .needMore(let consumed):
                EvBuffer.drain(input, consumed)
                if consumed == 0 { return }
            case .head(let head, let consumed):
                EvBuffer.drain(input, consumed)
                if head.isInterim {
                    // 1xx: presignd answered `100 Continue` itself; the final head follows.
                    exchange.sawInterimHead = true
                    continue
                }
                exchange.sawInterimHead = false
                exchange.ops.responseHeadArrived(status: head.status, at: borrowedWorker.with { $0.nowMicroseconds() })
                writeResponseHead(head, exchange: exchange)
            case .body(let skip, let count):
                EvBuffer.drain(input, skip)
                if count > 0 {
                    exchange.responseBodyBytes += count
                    if exchange.responseChunkedToClient {
                        EvBuffer.addChunkHeader(output, size: count)
                        EvBuffer.move(from: input, to: output, count: count)
                        EvBuffer.add(output, "\r\n")
                    } else {
                        EvBuffer.move(from: input, to: output, count: count)
                    }
                } else if skip == 0 {
                    return
                }
            case .end(let consumed):
                EvBuffer.drain(input, consumed)
                if exchange.sawInterimHead {
                    exchange.sawInterimHead = false
                    continue
                }
                completeResponse()
                return
            }
        }
    }

    private func writeResponseHead(_ head: ResponseHead, exchange: Exchange) {
        responsePhase = .body
        // First byte seen: from now on a silent upstream is a stalled body (body_idle_timeout).
        exchange.upstream?.setTimeouts(
            readMilliseconds: settings.limits.bodyIdleTimeoutMilliseconds,
            writeMilliseconds: settings.limits.bodyIdleTimeoutMilliseconds)
        exchange.responseStatus = head.status
        let framing = exchange.responseDecoder.framing
        let bodyless = exchange.method == "HEAD" || head.status == 204 || head.status == 304
        var rechunk = false
        if !bodyless && (framing == .chunked || framing == .untilClose) {
            if exchange.clientIsHTTP10 { closeAfterResponse = true } else { rechunk = true }
        }
        if requestPhase != .done { closeAfterResponse = true }
        exchange.responseChunkedToClient = rechunk
        borrowedWorker.with { worker in
            worker.withHeadBuffer { bytes in
                HTTPEncoder.append("HTTP/1.1", into: &bytes)
                HTTPEncoder.appendStatusAndReason(head.status, head.reason, into: &bytes)
                if let raw = head.rawFields {
                    bytes.append(contentsOf: raw)  // already without the hop-by-hop lines
                } else {
                    for (name, value) in head.headers where !ASCIIName.isHopByHopResponseHeader(name) {
                        HTTPEncoder.appendField(name, value, into: &bytes)
                    }
                }
                if rechunk { HTTPEncoder.append("Transfer-Encoding: chunked\r\n", into: &bytes) }
                HTTPEncoder.append("x-presignd-request-id: ", into: &bytes)
                exchange.id.append(to: &bytes)
                HTTPEncoder.append("\r\n", into: &bytes)
                if closeAfterResponse {
                    HTTPEncoder.append("Connection: close\r\n", into: &bytes)
                } else if exchange.clientIsHTTP10 {
                    HTTPEncoder.append("Connection: keep-alive\r\n", into: &bytes)
                }
                HTTPEncoder.append("\r\n", into: &bytes)
                EvBuffer.add(output, bytes)
            }
        }
    }

    /// The upstream's response is complete: pool or close the upstream, then the client's next step.
    private func completeResponse() {
        guard let exchange else { return }
        borrowedWorker.with { worker in completeResponse(exchange, worker: worker) }
    }

    private func completeResponse(_ exchange: Exchange, worker: Worker) {
        if exchange.responseChunkedToClient { EvBuffer.add(output, "0\r\n\r\n") }
        if let upstream = exchange.upstream {
            let reusable =
                exchange.responseDecoder.isKeepAlive && requestPhase == .done && exchange.spool == nil
                && EvBuffer.length(upstream.input) == 0 && EvBuffer.length(upstream.output) == 0
                && !worker.isDraining
            if reusable && settings === worker.settings {
                worker.withPool(exchange.upstreamIndex) { $0.put(upstream) }
            } else {
                upstream.free()
            }
            exchange.upstream = nil
        }
        upstreamReadPaused = false
        worker.exchangeEnded(exchange, completed: true)
        self.exchange = nil
        responsePhase = .none
        if requestPhase != .done { closeAfterResponse = true }
        requestCycleEnded()
    }

    /// After a response: close if asked, else read the next request (maybe already buffered).
    func requestCycleEnded() {
        guard exchange == nil, requestPhase == .done || requestPhase == .head || closeAfterResponse else { return }
        if closeAfterResponse || worker.isDraining {
            closeWhenFlushed()
            return
        }
        requestPhase = .head
        // A reload applies from the next request on (compared first: an assignment is a retain and a release).
        if settings !== worker.settings { settings = worker.settings }
        setReadTimeout(settings.limits.idleTimeoutMilliseconds)
        resumeClientReading()
        processClientInput()
    }
}

extension Exchange {
    func isRetryableAfter(_ connection: UpstreamConnection) -> Bool {
        guard !hasRetried, !receivedResponseByte, connection.isReused else { return false }
        // POST is never replayed, bodyless or not (`?uploads` would create a second upload).
        guard method != "POST" else { return false }
        let idempotent = method == "GET" || method == "HEAD" || method == "DELETE" || method == "OPTIONS"
        return (idempotent && !requestHasBody) || requestBodyBytes == 0
    }
}
