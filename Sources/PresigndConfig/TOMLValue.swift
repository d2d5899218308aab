/// A parsed TOML value and where it starts in the file.
public struct TOMLValue: Sendable {
    /// The TOML types presignd's subset supports.
    public enum Kind: Sendable {
        case string(String)
        case integer(Int)
        case boolean(Bool)
        /// A static array `[1, 2]`.
        case array([TOMLValue])
        /// A `[table]`, a dotted-key table or an inline table `{ a = 1 }`.
        case table(TOMLTable)
        /// An array of tables built by `[[name]]` headers.
        case tableArray([TOMLTable])
        /// A value that failed to parse. The parser already reported it; decoders skip it silently so that one
        /// mistake does not also show up as a "missing key" error.
        case invalid
    }

    public var kind: Kind
    /// Where the value starts (its first character).
    public var position: SourcePosition

    public init(_ kind: Kind, at position: SourcePosition) {
        self.kind = kind
        self.position = position
    }

    /// The type with an article, for messages: "expected a string, found an integer".
    public var typeDescription: String {
        switch kind {
        case .string: "a string"
        case .integer: "an integer"
        case .boolean: "a boolean"
        case .array: "an array"
        case .table: "a table"
        case .tableArray: "an array of tables"
        case .invalid: "an invalid value"
        }
    }

    /// The tables of a `[[name]]` array, or of a static array whose elements are all inline tables.
    public var tables: [TOMLTable]? {
        switch kind {
        case .tableArray(let tables):
            return tables
        case .array(let values):
            var tables: [TOMLTable] = []
            for value in values {
                guard case .table(let table) = value.kind else { return nil }
                tables.append(table)
            }
            return tables
        default:
            return nil
        }
    }
}
