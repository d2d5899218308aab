/// What a `ResponseDecoder` asks its caller to do; the cases mean what `DecoderOutput`'s do.
public enum ResponseDecoderOutput: Sendable, Equatable {
    case needMore(consumed: Int)
    /// A complete response head. A 1xx head (`head.isInterim`) is followed by `.end(consumed: 0)` and then by
    /// the next head for the same request.
    case head(ResponseHead, consumed: Int)
    case body(skip: Int, count: Int)
    case end(consumed: Int)
}
