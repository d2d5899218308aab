import PresigndHTTP1

/// The upstream side: attach an upstream connection, decode its response and stream it to the client.
extension ClientConnection: UpstreamConnectionDelegate {
    /// Connects (or takes a pooled connection) and sends the signed head.
    func attachUpstream(fresh: Bool) {
        guard let exchange else { return }
        // Bound once: each read of the `settings` property retains and releases it.
        let settings = self.settings
        // After a reload the worker's pools belong to the new configuration: an exchange still
        // running under the old one connects on its own.
        let pooled = settings === worker.settings
        let index = exchange.upstreamIndex
        if exchange.ops.attempts > 0 {
            // Another attempt (issue 21 §3): signed again with a fresh date, its body from the start, its answer
            // read by a new decoder (the first attempt's is the one the exchange was made with).
            exchange.responseDecoder = Exchange.makeResponseDecoder()
            do throws(ProxyError) {
                try signAttempt(exchange)
                try rewindBodyForRetry(exchange)
            } catch {
                handle(.failed(error))
                return
            }
        }
        var connection = fresh || !pooled ? nil : worker.pool(index).take()
        if connection == nil {
            do {
                connection = try UpstreamConnection(
                    loop: worker.loop, target: settings.upstreams[index], upstreamIndex: index,
                    sessions: pooled ? worker.pool(index).sessions : TLSSessionStore(),
                    lowWatermark: settings.lowWatermark)
            } catch {
                exchange.ops.attempts += 1
                if !retryFailedAttempt(exchange, .connectFailed) { handle(.upstreamFailed(error, retryable: false)) }
                return
            }
        }
        guard let connection else { return }
        connection.setTimeouts(
            readMilliseconds: settings.upstreams[index].firstByteTimeoutMilliseconds,
            writeMilliseconds: connection.isConnected
                ? settings.limits.bodyIdleTimeoutMilliseconds : settings.upstreams[index].connectTimeoutMilliseconds)
        connection.delegate = self
        connection.enableReading()
        exchange.upstream = connection
        do {
            try connection.write(exchange.encodedHead)
            if let kept = exchange.retry.body, !kept.isEmpty { try connection.write(kept) }
        } catch {
            connection.free()
            exchange.upstream = nil
            handle(.upstreamFailed(.internalError("\(error)"), retryable: false))
            return
        }
        // Sent, or copied into the output: the head's buffer serves the next exchange's head (a later attempt is
        // signed again into a new one), so a worker signs into one buffer however many exchanges are in flight.
        worker.recycleSignedHead(of: exchange)
        worker.upstreamAttached(connection, to: exchange, settings: settings)
        if exchange.spool != nil { pumpSpool() }
    }

    /// Lets go of the exchange's upstream connection: back to its pool when it is clean, else closed.
    func releaseUpstream(reusable: Bool) {
        guard let exchange, let upstream = exchange.upstream else { return }
        exchange.upstream = nil
        if reusable && settings === worker.settings {
            worker.pool(exchange.upstreamIndex).put(upstream)
        } else {
            upstream.free()
        }
    }

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
        guard self.exchange === exchange, exchange.upstream === connection, !isClosed else { return }
        if failure == .closed, exchange.retry.held != nil, exchange.responseDecoder.finishOnClose() {
            finishHeldAnswer(exchange, upstreamReusable: false)
            return
        }
        // Only an orderly close ends a close-delimited body; a reset cuts it short (bug h).
        if failure == .closed, machine.responseFraming != nil, exchange.responseDecoder.finishOnClose() {
            handle(.responseEnded(upstreamReusable: false))
            return
        }
        let error: ProxyError
        switch failure {
        case .dns(let reason): error = .upstreamDNS(reason)
        case .connect(let reason): error = .upstreamConnect(reason)
        case .tls(let reason): error = .upstreamTLS(reason)
        case .timeout: error = .upstreamTimeout
        case .closed: error = .upstreamProtocol("the connection closed before a complete response")
        case .reset(let reason): error = .upstreamProtocol("the connection was reset: \(reason)")
        }
        let nothingArrived = exchange.responseDecoder.isIdle && connection.input.count == 0
        // A stale pooled connection: sent again at once on a fresh one, outside the retry policy (POST never).
        let retryable = connection.isReused && nothingArrived && retryableRequest(exchange) == .replayable
        if !retryable && machine.responseFraming == nil && exchange.retry.held == nil {
            let outcome: AttemptOutcome? =
                switch failure {
                case .dns, .connect, .tls: .connectFailed
                case .closed, .reset: nothingArrived ? .resetBeforeHead : nil
                case .timeout: nil
                }
            if let outcome, retryFailedAttempt(exchange, outcome) { return }
        }
        exchange.retry.held = nil
        if machine.responseFraming == nil && !retryable {
            worker.logger.warning(
                "Upstream failed",
                metadata: [
                    "request.id": exchange.requestID, "upstream": settings.upstreams[exchange.upstreamIndex].name,
                    "error": error.statusAndCode.code, "reason": error.message,
                ])
        } else if retryable {
            worker.logger.debug("Retrying on a fresh upstream connection", metadata: ["request.id": exchange.requestID])
        }
        handle(.upstreamFailed(error, retryable: retryable))
    }

    func processUpstreamInput() {
        guard let exchange, let upstream = exchange.upstream else { return }
        let input = upstream.input
        /// The last head was a 1xx; its `.end` is not the response's.
        var sawInterimHead = false
        while !isClosed, self.exchange === exchange, exchange.upstream === upstream {
            if output.count > settings.highWatermark {
                // Paused until the client's output drains: `settle` resumes reading and this loop together
                // (whatever is already buffered, a body's `.end` included, waits for it).
                upstream.disableReading()
                return
            }
            if let fill = exchange.cacheFill, fill.isPaused, !resumeCacheFill(fill) {
                // Paused until the cache's write queue has room (`cacheWaitEnded` resumes it).
                upstream.disableReading()
                return
            }
            // Decoded even when empty: a finished body still owes its `.end`.
            let decoded: ResponseDecoderOutput
            do {
                decoded = try input.withFirstSegment { segment, available throws(HTTPParseError) in
                    try exchange.responseDecoder.next(segment, available: available, requestMethod: exchange.method)
                }
            } catch {
                handle(.failed(.upstreamProtocol("\(error)")))
                return
            }
            switch decoded {
            case .needMore(let consumed):
                input.drain(consumed)
                if consumed == 0 { return }
            case .head(let head, let consumed):
                input.drain(consumed)
                if head.isInterim {
                    // 1xx: presignd answered `100 Continue` itself; the final head follows.
                    sawInterimHead = true
                    continue
                }
                exchange.ops.responseHeadArrived(status: head.status, at: worker.nowMicroseconds())
                invalidateCache(exchange)
                exchange.responseStatus = head.status
                if holdsAnswer(head, exchange) {
                    exchange.retry.held = HeldAnswer(head: head)
                    handle(.answerHeld(now: worker.nowMicroseconds() / 1000))
                    continue
                }
                worker.observeUpstreamDate(head, upstream: exchange.upstreamIndex, settings: settings, always: false)
                // Moved through (its last use): without a fill or revalidation it reaches the exchange uncopied.
                guard let sent = throughCache(head, exchange) else {
                    handle(.failed(exchange.cacheFill?.failure ?? .upstreamProtocol("the range answer does not fit")))
                    return
                }
                answerArrived(sent, exchange)
            case .body(let skip, let count):
                input.drain(skip)
                if count > 0 && exchange.retry.held != nil && holdAnswerBody(exchange, from: input, count: count) {
                    continue
                }
                if count > 0 {
                    var toClient = count
                    var after = 0
                    if let fill = exchange.cacheFill {
                        feedFill(fill, from: input, count: count)
                        // A widened range: the bytes around the client's went to the cache only.
                        if let share = fill.clientShare(of: count) {
                            input.drain(share.before)
                            (toClient, after) = (share.take, share.after)
                        }
                    }
                    exchange.responseBodyBytes += toClient
                    if toClient > 0 && machine.responseFraming == .rechunked {
                        writeChunkHeader(size: toClient)
                        moveBytes(from: input, to: output, count: toClient)
                        write("\r\n")
                    } else if toClient > 0 {
                        moveBytes(from: input, to: output, count: toClient)
                    }
                    input.drain(after)
                } else if skip == 0 {
                    return
                }
            case .end(let consumed):
                input.drain(consumed)
                if sawInterimHead {
                    sawInterimHead = false
                    continue
                }
                let reusable =
                    exchange.responseDecoder.isKeepAlive && exchange.spool == nil && input.count == 0
                    && upstream.output.count == 0 && !worker.isDraining
                if exchange.retry.held != nil {
                    finishHeldAnswer(exchange, upstreamReusable: reusable)
                } else {
                    if let suffix = exchange.cachedSuffix {
                        exchange.cachedSuffix = nil
                        guard sendCachedBody(suffix.take(), exchange: exchange) else { return }
                    }
                    if let rest = exchange.cachedRest {
                        // A 304 confirmed a large cached answer: its other slices follow as the output drains.
                        exchange.cachedRest = nil
                        cachedBodySender = rest
                        handle(.revalidatedBodyFollows(upstreamReusable: reusable))
                        return
                    }
                    handle(.responseEnded(upstreamReusable: reusable))
                }
                return
            }
        }
    }

    /// Writes the upstream's head to the client: end-to-end fields as received, presignd's request id, and the
    /// framing and connection fields this connection needs.
    func writeResponseHead(framing: ClientBodyFraming, closing: Bool) {
        guard let exchange, let head = exchange.responseHead.take() else { return }  // moved out, not copied
        // First byte seen: from now on a silent upstream is a stalled body (body_idle_timeout).
        exchange.upstream?.setTimeouts(
            readMilliseconds: settings.limits.bodyIdleTimeoutMilliseconds,
            writeMilliseconds: settings.limits.bodyIdleTimeoutMilliseconds)
        worker.withHeadBuffer { bytes in
            HTTPEncoder.append("HTTP/1.1", into: &bytes)
            HTTPEncoder.appendStatusAndReason(head.status, head.reason, into: &bytes)
            if let raw = head.rawFields {
                bytes.append(contentsOf: raw)  // already without the hop-by-hop lines
            } else {
                // Fields the upstream's Connection header names are hop-by-hop too (RFC 9110 §7.6.1, bug f).
                let listed = RequestRewriter.connectionTokens(head.headers)
                for (name, value) in head.headers
                where !ResponseHead.isHopByHopField(name.utf8)
                    && (listed.isEmpty || !listed.contains(ASCII.lowercased(name)))
                {
                    HTTPEncoder.appendField(name, value, into: &bytes)
                }
            }
            if framing == .rechunked { HTTPEncoder.append("Transfer-Encoding: chunked\r\n", into: &bytes) }
            // A cacheable GET the cache did not answer (issue 23 §7).
            if exchange.cacheFill?.config.xCacheHeader == true && head.headers["X-Cache"] == nil {
                HTTPEncoder.append("X-Cache: MISS\r\n", into: &bytes)
            }
            HTTPEncoder.append("x-presignd-request-id: ", into: &bytes)
            exchange.id.append(to: &bytes)
            HTTPEncoder.append("\r\n", into: &bytes)
            if closing {
                HTTPEncoder.append("Connection: close\r\n", into: &bytes)
            } else if exchange.clientIsHTTP10 {
                HTTPEncoder.append("Connection: keep-alive\r\n", into: &bytes)
            }
            HTTPEncoder.append("\r\n", into: &bytes)
            write(bytes)
        }
        writeHeldBody(exchange)
        if let body = exchange.cachedBody {
            exchange.cachedBody = nil
            sendCachedBody(body.take(), exchange: exchange)
        }
    }
}
