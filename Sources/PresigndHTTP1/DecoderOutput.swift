/// What a request decoder (or `AWSChunkedDecoder`) asks its caller to do with the leading bytes of its buffer.
///
/// A message always reads as `.head`, then zero or more `.body`, then `.end` (also when there is no body, as
/// `.end(consumed: 0)`). The decoder never reads body bytes: it only counts them. `AWSChunkedDecoder` never
/// returns `.head`.
public enum DecoderOutput: Sendable, Equatable {
    /// The leading `consumed` bytes were taken into decoder state: drain them, and call again when more bytes
    /// arrive (or at once if more are already buffered beyond the segment passed in).
    case needMore(consumed: Int)
    /// A complete request head; drain `consumed` bytes.
    case head(RequestHead, consumed: Int)
    /// Drain `skip` framing bytes; the `count` bytes after them are body data to move on (`count` is 0 only
    /// when `skip` is not).
    case body(skip: Int, count: Int)
    /// The message is complete once `consumed` more bytes are drained; the decoder is ready for the next one.
    case end(consumed: Int)
}
