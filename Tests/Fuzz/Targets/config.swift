import PresigndConfig

/// libFuzzer target `config`: the TOML configuration loader (parser, decoding, validation) over arbitrary text.
/// Invariants: no crash, the same text gives the same result twice, and every error has a position inside the
/// text (a line no larger than the number of lines, `0` only for whole-file errors).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    let text = String(decoding: bytes, as: UTF8.self)
    // A directory that does not exist anchors relative credential and CA paths; no environment is visible.
    let path = "/nonexistent-presignd-fuzz/presignd.toml"
    let first = ConfigLoader.parse(text: text, path: path, environment: [:])
    let second = ConfigLoader.parse(text: text, path: path, environment: [:])
    switch (first, second) {
    case (.success, .success):
        break
    case (.failure(let errors), .failure(let again)):
        precondition(!errors.errors.isEmpty, "a failure without errors")
        precondition(errors.errors.count == again.errors.count, "the same text gave different errors")
        let lines = text.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        for error in errors.errors {
            precondition(error.line >= 0 && error.line <= lines, "error line outside the text: \(error.line)")
            _ = "\(error)"
        }
    default:
        preconditionFailure("the same text parsed once and failed once")
    }
    return 0
}
