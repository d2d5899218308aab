#if canImport(Glibc)
    import Glibc
#endif

/// Slice files opened for a cached answer between the decision and the write (issue 23 §5): opening them first
/// is what decides the answer (a slice evicted meanwhile sends the request upstream instead). Descriptors not
/// taken by the write are closed when this goes.
final class OpenedSlices {
    private(set) var pieces: [(descriptor: Int32, offset: Int, length: Int)] = []

    func append(descriptor: Int32, offset: Int, length: Int) {
        var grown = pieces  // taken out and put back: no access to `pieces` spans a call
        pieces = []
        grown.append((descriptor, offset, length))
        pieces = grown
    }

    /// The pieces, now the caller's to close or hand to the output.
    func take() -> [(descriptor: Int32, offset: Int, length: Int)] {
        defer { pieces = [] }
        return pieces
    }

    deinit { for piece in pieces { close(piece.descriptor) } }
}
