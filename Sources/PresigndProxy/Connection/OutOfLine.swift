/// A value an `Exchange` keeps out of line, behind one reference: the large parts it holds for a retry or a
/// spooled upload (`ForwardPlan`, 272 bytes; `AWSChunkedDecoder`, 113). Inline, they made an exchange 1464 bytes,
/// over the 1032 that glibc's per-thread cache serves: its allocation took malloc's slow path and its free chunk
/// consolidation on every request (about 0.4 µs a request under load, `perf`). Boxed, an exchange is about 830
/// bytes, and the plan's box (288) is served by the cache too.
///
/// Immutable: a new value is a new box.
final class OutOfLine<Value> {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
