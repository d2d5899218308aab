/// Typed, position-aware reading of one TOML table. Mistakes are reported to `diagnostics` at the value's (or
/// key's) position and the accessor returns nil, so decoding continues and finds every error in one pass.
struct TableReader {
    let table: TOMLTable
    /// How messages name the table: `[server]`, `[[bucket]]`, `[upstream.r2]`, `the top level`.
    let context: String
    /// Every key this table may hold, for unknown-key errors and suggestions.
    let knownKeys: [String]
    let diagnostics: Diagnostics

    /// The value of `key`; nil when absent or when it failed to parse (already reported).
    func value(_ key: String) -> TOMLValue? {
        precondition(knownKeys.contains(key), "\(key) is not a known key of \(context)")
        guard let value = table[key] else { return nil }
        if case .invalid = value.kind { return nil }
        return value
    }

    /// Whether the key is written at all, even with a broken value.
    func contains(_ key: String) -> Bool { table[key] != nil }

    /// Where the key itself is written.
    func keyPosition(_ key: String) -> SourcePosition { table.entry(key)?.keyPosition ?? table.position }

    func mismatch(_ key: String, _ value: TOMLValue, expected: String) {
        diagnostics.error("'\(key)': expected \(expected), found \(value.typeDescription)", at: value.position)
    }

    func string(_ key: String) -> Located<String>? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value.kind else {
            mismatch(key, value, expected: "a string")
            return nil
        }
        return Located(value: text, position: value.position)
    }

    func integer(_ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .integer(let number) = value.kind else {
            mismatch(key, value, expected: "an integer")
            return nil
        }
        guard range.contains(number) else {
            diagnostics.error(
                "'\(key)' must be from \(range.lowerBound) to \(range.upperBound)", at: value.position)
            return nil
        }
        return number
    }

    func boolean(_ key: String) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .boolean(let flag) = value.kind else {
            mismatch(key, value, expected: "true or false")
            return nil
        }
        return flag
    }

    /// An array of strings; with `allowSingle`, a lone string counts as a one-element array.
    func strings(_ key: String, allowSingle: Bool = false) -> [Located<String>]? {
        guard let value = value(key) else { return nil }
        if allowSingle, case .string(let text) = value.kind { return [Located(value: text, position: value.position)] }
        guard case .array(let elements) = value.kind else {
            mismatch(key, value, expected: allowSingle ? "a string or an array of strings" : "an array of strings")
            return nil
        }
        var result: [Located<String>] = []
        for element in elements {
            guard case .string(let text) = element.kind else {
                mismatch(key, element, expected: "a string in the array")
                return nil
            }
            result.append(Located(value: text, position: element.position))
        }
        return result
    }

    /// One of an enum's raw values.
    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, as type: Choice.Type) -> Choice?
    where Choice.RawValue == String {
        guard let text = string(key) else { return nil }
        if let choice = Choice(rawValue: text.value) { return choice }
        let allowed = Choice.allCases.map(\.rawValue)
        diagnostics.error(
            "invalid \(key) '\(text.value)'; expected one of: \(allowed.joined(separator: ", "))"
                + Suggestion.hint(for: text.value, in: allowed), at: text.position)
        return nil
    }

    /// Reports every key not in `knownKeys`, at the key, with a suggestion.
    func reportUnknownKeys() {
        for key in table.keys where !knownKeys.contains(key) {
            let place = context.hasPrefix("[") ? "in \(context)" : "at \(context)"
            diagnostics.error(
                "unknown key '\(key)' \(place)" + Suggestion.hint(for: key, in: knownKeys), at: keyPosition(key))
        }
    }
}
