/// Durations, sizes and sub-tables.
extension TableReader {
    /// A duration string (`"30s"`, `"1h30m"`) or an integer number of seconds, within `range`.
    func duration(_ key: String, in range: ClosedRange<ConfigDuration>) -> ConfigDuration? {
        guard let value = value(key) else { return nil }
        let duration: ConfigDuration
        switch value.kind {
        case .integer(let seconds) where seconds >= 0 && seconds <= Int.max / 1000:
            duration = .seconds(seconds)
        case .string(let text):
            guard let parsed = ConfigDuration(parsing: text) else {
                diagnostics.error(
                    "'\(key)': invalid duration '\(text)'; use a number with a unit (ms, s, m, h, d), e.g. \"30s\" "
                        + "or \"1h30m\"", at: value.position)
                return nil
            }
            duration = parsed
        default:
            mismatch(key, value, expected: "a duration such as \"30s\"")
            return nil
        }
        guard range.contains(duration) else {
            diagnostics.error("'\(key)' must be from \(range.lowerBound) to \(range.upperBound)", at: value.position)
            return nil
        }
        return duration
    }

    /// A size string (`"64KiB"`, `"5GiB"`) or an integer number of bytes, within `range`.
    func size(_ key: String, in range: ClosedRange<Int>) -> Int? {
        amount(key, in: range, perSecond: false)
    }

    /// A rate string (`"1KiB/s"`, `"500B/s"`) or an integer number of bytes per second, within `range`.
    func rate(_ key: String, in range: ClosedRange<Int>) -> Int? {
        amount(key, in: range, perSecond: true)
    }

    /// Bytes, or bytes per second (`perSecond`: the string ends in `/s`).
    private func amount(_ key: String, in range: ClosedRange<Int>, perSecond: Bool) -> Int? {
        guard let value = value(key) else { return nil }
        let unit = perSecond ? "/s" : ""
        let bytes: Int
        switch value.kind {
        case .integer(let number):
            bytes = number
        case .string(let text):
            let parsed =
                perSecond
                ? (text.hasSuffix("/s") ? ByteSize.parse(String(text.dropLast(2))) : nil) : ByteSize.parse(text)
            guard let parsed else {
                let advice =
                    perSecond
                    ? "use a size per second (B, KiB, MiB, KB, MB), e.g. \"1KiB/s\""
                    : "use a number with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB), e.g. \"64KiB\""
                diagnostics.error(
                    "'\(key)': invalid \(perSecond ? "rate" : "size") '\(text)'; \(advice)", at: value.position)
                return nil
            }
            bytes = parsed
        default:
            mismatch(key, value, expected: perSecond ? "a rate such as \"1KiB/s\"" : "a size such as \"64KiB\"")
            return nil
        }
        guard range.contains(bytes) else {
            diagnostics.error(
                "'\(key)' must be from \(ByteSize.format(range.lowerBound))\(unit) to "
                    + "\(ByteSize.format(range.upperBound))\(unit)", at: value.position)
            return nil
        }
        return bytes
    }

    /// A sub-table such as `[server.limits]`; reports anything else.
    func table(_ key: String) -> TOMLTable? {
        guard let value = value(key) else { return nil }
        guard case .table(let table) = value.kind else {
            mismatch(key, value, expected: "a table")
            return nil
        }
        return table
    }

    /// A reader for a sub-table.
    func reader(for table: TOMLTable, context: String, knownKeys: [String]) -> TableReader {
        TableReader(table: table, context: context, knownKeys: knownKeys, diagnostics: diagnostics)
    }
}
