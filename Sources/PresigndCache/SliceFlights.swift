import Synchronization

/// The single-flight table of a store: one `SliceFillStateMachine` per slice being filled, shared by the workers
/// (issue 23 §5). Slices nobody fills are not in it: a slice's presence is the store's to say, so a request
/// starts from `present` or `absent` as the store answers. The actions are for the caller to carry out (wakes
/// for another worker's connections go through that worker's mailbox).
public final class SliceFlights<Waiter: Hashable & Sendable>: Sendable {
    private struct Table: Sendable {
        var machines: [SliceID: SliceFillStateMachine<Waiter>] = [:]
        var nextFill = 1
    }

    private let table = Mutex(Table())

    public init() {}

    /// Feeds `event` to the slice's machine. A `.request` for a slice with no machine starts one (`isPresent`
    /// from the store); a machine that ends `present`, `absent` or `failed` leaves the table.
    public func handle(
        _ slice: SliceID, _ event: SliceFillStateMachine<Waiter>.Event, isPresent: Bool = false
    ) -> SliceFillStateMachine<Waiter>.Action {
        table.withLock { table in
            var machine: SliceFillStateMachine<Waiter>
            if let existing = table.machines[slice] {
                machine = existing
            } else if case .request = event {
                machine = SliceFillStateMachine(isPresent: isPresent, firstFill: table.nextFill)
            } else {
                return .none  // a report of a fill that already left the table
            }
            let action = machine.handle(event)
            if case .startFill(let fill, _, _) = action { table.nextFill = fill + 1 }
            if case .filling = machine.state {
                table.machines[slice] = machine
            } else {
                table.machines[slice] = nil
            }
            return action
        }
    }

    /// Slices with a fill under way (metrics, tests).
    public var fillsInProgress: Int { table.withLock { $0.machines.count } }
}
