internal import CLibevent

/// Timeouts as deadlines on the stream's one timer.
///
/// A libevent timeout on the read event would cost a timer-heap update on every read and every change of timeout
/// (six a proxied request). Here a read only moves a number; the timer is armed only when a deadline comes
/// earlier than the one it already waits for. When it fires before the current deadline (the deadline moved on
/// with a read or a longer timeout) it waits again for the rest.
extension SocketStream {
    public func setTimeouts(readMilliseconds: Int, writeMilliseconds: Int) {
        readTimeoutMilliseconds = max(0, readMilliseconds)
        writeTimeoutMilliseconds = max(0, writeMilliseconds)
        guard !closed else { return }
        if reading { restartReadDeadline() } else { readDeadline = 0 }
        if isWriteArmed { restartWriteDeadline() } else { writeDeadline = 0 }
    }

    func restartReadDeadline() {
        guard readTimeoutMilliseconds > 0 else {
            readDeadline = 0
            return
        }
        readDeadline = MonotonicClock.coarseMilliseconds() + readTimeoutMilliseconds
        armTimer(for: readDeadline)
    }

    func restartWriteDeadline() {
        guard writeTimeoutMilliseconds > 0 else {
            writeDeadline = 0
            return
        }
        writeDeadline = MonotonicClock.coarseMilliseconds() + writeTimeoutMilliseconds
        armTimer(for: writeDeadline)
    }

    /// Arms the timer for `deadline` unless it already fires at or before it.
    private func armTimer(for deadline: Int) {
        guard timerExpiry == 0 || deadline < timerExpiry else { return }
        do {
            try LibeventEvent.add(timerEvent, milliseconds: deadline - MonotonicClock.coarseMilliseconds())
            timerExpiry = deadline
        } catch {
            failSoon(.failed(error.description))
        }
    }

    /// Reports `end` from the timer on the next loop iteration: owners never hear from a stream inside their own
    /// call to it. `event_active` cannot fail.
    func failSoon(_ end: StreamEnd) {
        guard !closed, pendingEnd == nil else { return }
        pendingEnd = end
        event_active(timerEvent, Int32(EV_TIMEOUT), 0)
    }

    func handleTimer() {
        timerExpiry = 0
        if let end = pendingEnd {
            pendingEnd = nil
            disableReading()
            disarmWriting()
            report(end)
            return
        }
        let now = MonotonicClock.coarseMilliseconds()
        if readDeadline != 0 && readDeadline <= now {
            // As a bufferevent does: reading stops; the owner decides what else happens.
            disableReading()
            report(.readTimeout)
        } else if writeDeadline != 0 && writeDeadline <= now {
            writeDeadline = 0
            report(.writeTimeout)
        }
        guard !closed else { return }
        if readDeadline != 0 { armTimer(for: readDeadline) }
        if writeDeadline != 0 { armTimer(for: writeDeadline) }
    }
}
