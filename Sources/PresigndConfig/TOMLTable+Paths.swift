/// Building nested tables from headers and dotted keys, with TOML's rules on redefinition.
extension TOMLTable {
    /// Runs `body` on the table at `path`, creating missing tables with `origin` and descending into the last
    /// element of arrays of tables.
    mutating func withTable<Result>(
        at path: ArraySlice<TOMLKey>, creating origin: Origin,
        _ body: (inout TOMLTable) throws(TOMLParseFailure) -> Result
    ) throws(TOMLParseFailure) -> Result {
        guard let first = path.first else { return try body(&self) }
        let rest = path.dropFirst()
        guard let existing = entry(first.name) else {
            var table = TOMLTable(origin: origin, position: first.position)
            let result = try table.withTable(at: rest, creating: origin, body)
            set(first.name, keyPosition: first.position, value: TOMLValue(.table(table), at: first.position))
            return result
        }
        switch existing.value.kind {
        case .table(var table):
            guard table.origin != .inline else {
                throw TOMLParseFailure(first.position, "cannot add keys to inline table '\(first.name)'")
            }
            let result = try table.withTable(at: rest, creating: origin, body)
            replaceValue(first.name, with: TOMLValue(.table(table), at: existing.value.position))
            return result
        case .tableArray(var tables):
            guard var last = tables.popLast() else {
                throw TOMLParseFailure(first.position, "array of tables '\(first.name)' is empty")
            }
            let result = try last.withTable(at: rest, creating: origin, body)
            tables.append(last)
            replaceValue(first.name, with: TOMLValue(.tableArray(tables), at: existing.value.position))
            return result
        default:
            throw Self.alreadyDefined(first, existing)
        }
    }

    /// `[header]`: defines `key` as a table, or upgrades a table created implicitly by `[key.child]`.
    mutating func defineHeaderTable(_ key: TOMLKey, header: String, at start: SourcePosition) throws(TOMLParseFailure) {
        guard let existing = entry(key.name) else {
            let table = TOMLTable(origin: .header, position: start)
            set(key.name, keyPosition: key.position, value: TOMLValue(.table(table), at: start))
            return
        }
        switch existing.value.kind {
        case .table(var table) where table.origin == .implicit:
            table.origin = .header
            table.position = start
            replaceValue(key.name, with: TOMLValue(.table(table), at: start))
        case .table(let table):
            throw TOMLParseFailure(start, "table [\(header)] is already defined at line \(table.position.line)")
        case .tableArray:
            throw TOMLParseFailure(
                start, "[\(header)] is already an array of tables (line \(existing.value.position.line))")
        default:
            throw Self.alreadyDefined(key, existing)
        }
    }

    /// `[[header]]`: appends a new table to the array `key`, creating the array on first use.
    mutating func appendArrayElement(_ key: TOMLKey, header: String, at start: SourcePosition) throws(TOMLParseFailure)
    {
        let element = TOMLTable(origin: .header, position: start)
        guard let existing = entry(key.name) else {
            set(key.name, keyPosition: key.position, value: TOMLValue(.tableArray([element]), at: start))
            return
        }
        guard case .tableArray(var tables) = existing.value.kind else {
            throw TOMLParseFailure(
                start,
                "cannot define [[\(header)]]: '\(key.name)' is already defined at line \(existing.keyPosition.line)")
        }
        tables.append(element)
        replaceValue(key.name, with: TOMLValue(.tableArray(tables), at: existing.value.position))
    }

    /// `a.b.c = value`: creates `a` and `a.b` as dotted-key tables and sets `c`.
    mutating func insert(_ key: [TOMLKey], _ value: TOMLValue) throws(TOMLParseFailure) {
        guard let last = key.last else { return }
        try withTable(at: key.dropLast(), creating: .dottedKey) { (table) throws(TOMLParseFailure) in
            if let existing = table.entry(last.name) {
                throw TOMLParseFailure(
                    last.position,
                    "duplicate key '\(last.name)' (first defined at line \(existing.keyPosition.line), "
                        + "column \(existing.keyPosition.column))")
            }
            table.set(last.name, keyPosition: last.position, value: value)
        }
    }

    private static func alreadyDefined(_ key: TOMLKey, _ existing: Entry) -> TOMLParseFailure {
        TOMLParseFailure(
            key.position,
            "'\(key.name)' is already defined as a value at line \(existing.keyPosition.line), "
                + "column \(existing.keyPosition.column)")
    }
}
