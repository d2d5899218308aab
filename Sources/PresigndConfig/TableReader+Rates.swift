/// Transfer rates.
extension TableReader {
    /// A rate string (`"1KiB/s"`, `"500B/s"`) or an integer number of bytes per second, within `range`.
    func rate(_ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = value(key) else { return nil }
        let bytesPerSecond: Int
        switch value.kind {
        case .integer(let number):
            bytesPerSecond = number
        case .string(let text):
            guard text.hasSuffix("/s"), let parsed = ByteSize.parse(String(text.dropLast(2))) else {
                diagnostics.error(
                    "'\(key)': invalid rate '\(text)'; use a size per second (B, KiB, MiB, KB, MB), e.g. \"1KiB/s\"",
                    at: value.position)
                return nil
            }
            bytesPerSecond = parsed
        default:
            mismatch(key, value, expected: "a rate such as \"1KiB/s\"")
            return nil
        }
        guard range.contains(bytesPerSecond) else {
            diagnostics.error(
                "'\(key)' must be from \(ByteSize.format(range.lowerBound))/s to \(ByteSize.format(range.upperBound))/s",
                at: value.position)
            return nil
        }
        return bytesPerSecond
    }
}
