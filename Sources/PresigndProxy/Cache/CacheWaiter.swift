import PresigndCache
import PresigndHTTP1
import PresigndIO

/// A worker's doorbell for cache waits (issue 23 §5): a fill on any thread (a store's writer, another worker)
/// posts the waiting connection's id to the worker's mailbox and rings its control event; the worker then lets
/// the connection decide again (`ClientConnection.cacheWaitEnded`). A connection gone meanwhile is not found.
final class CacheWaker: Sendable {
    private let mailbox: Mailbox
    private let control: CrossThreadEvent

    init(mailbox: Mailbox, control: CrossThreadEvent) {
        self.mailbox = mailbox
        self.control = control
    }

    func wake(_ connection: ObjectIdentifier) {
        mailbox.post(.cacheWake(connection))
        control.fire()
    }
}

/// One connection waiting for a fill (`FillFlights.wait`).
struct CacheWaiter: FillWaiter {
    let waker: CacheWaker
    let connection: ObjectIdentifier

    func wake() { waker.wake(connection) }
}

/// What a request waiting for a fill needs to be decided again: its routed, allowed plan and its head. A class:
/// the connection holds a reference, not ~340 bytes inline that every idle connection would carry.
final class PendingCacheRead {
    let target: CacheReadTarget
    let plan: ForwardPlan
    let head: RequestHead
    let isHTTP10: Bool

    init(target: CacheReadTarget, plan: ForwardPlan, head: RequestHead, isHTTP10: Bool) {
        self.target = target
        self.plan = plan
        self.head = head
        self.isHTTP10 = isHTTP10
    }
}
