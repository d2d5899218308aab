/// One instruction from a body decoder, before it is wrapped in a public output enum.
enum BodyStep: Equatable {
    case needMore(consumed: Int)
    case body(skip: Int, count: Int)
    case end(consumed: Int)

    var output: DecoderOutput {
        switch self {
        case .needMore(let consumed): .needMore(consumed: consumed)
        case .body(let skip, let count): .body(skip: skip, count: count)
        case .end(let consumed): .end(consumed: consumed)
        }
    }

    var responseOutput: ResponseDecoderOutput {
        switch self {
        case .needMore(let consumed): .needMore(consumed: consumed)
        case .body(let skip, let count): .body(skip: skip, count: count)
        case .end(let consumed): .end(consumed: consumed)
        }
    }
}
