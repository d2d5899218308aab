#if canImport(Glibc)
    import Glibc
#endif

/// Answering at the descriptor limit (issue 20). With no descriptor left, `accept` fails and the clients wait in the
/// backlog, unanswered, for as long as the limit holds. A listener keeps one descriptor in reserve instead: at
/// EMFILE/ENFILE it gives it up, accepts the waiting connections one at a time (up to `overflowBatch` per failed
/// accept), hands each to `onOverflow` (which answers and closes it), and takes the reserve back.
extension Listener {
    /// Connections answered per failed accept: enough to clear a burst over the next few pauses, few enough that
    /// one loop iteration stays short.
    static let overflowBatch = 64

    static func openSpare() -> Int32 {
        open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    func shedOverflow() {
        guard let onOverflow, spareDescriptor >= 0 else { return }
        Glibc.close(spareDescriptor)
        spareDescriptor = -1
        for _ in 0..<Self.overflowBatch {
            // Blocking and inheritable are fine for a socket closed before this call returns (the answer is sent
            // with MSG_DONTWAIT); accept4 is not in the Glibc module.
            let fd = accept(listeningDescriptor, nil, nil)
            // EAGAIN: the backlog is empty; EMFILE: another thread took the descriptor.
            guard fd >= 0 else { break }
            onOverflow(fd)
        }
        // If another thread holds the descriptor now, the next failed accept tries again.
        spareDescriptor = Self.openSpare()
    }
}
