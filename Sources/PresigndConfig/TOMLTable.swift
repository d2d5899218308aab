/// A TOML table: keys in file order, each with its value and the position of the key itself.
public struct TOMLTable: Sendable {
    /// How a table came to exist, which decides whether a later header may define or extend it (TOML 1.0 §Table).
    public enum Origin: Sendable, Hashable {
        case root
        /// Created as the parent of `[a.b]` or of a dotted key; a later `[a]` header may still define it.
        case implicit
        /// Defined by a `[header]` (or a `[[header]]` element).
        case header
        /// Created by a dotted key `a.b = 1`.
        case dottedKey
        /// An inline table `{ ... }`: sealed once written.
        case inline
    }

    /// One key of the table.
    public struct Entry: Sendable {
        public var keyPosition: SourcePosition
        public var value: TOMLValue
    }

    /// Keys in the order they appear in the file.
    public private(set) var keys: [String] = []
    private var entries: [String: Entry] = [:]
    /// Where the table is defined: its `[header]`'s opening bracket, or the key that created it.
    public var position: SourcePosition
    public var origin: Origin

    public init(origin: Origin, position: SourcePosition) {
        self.origin = origin
        self.position = position
    }

    public var isEmpty: Bool { keys.isEmpty }

    public subscript(key: String) -> TOMLValue? { entries[key]?.value }

    /// The key's entry, with the key's own position.
    public func entry(_ key: String) -> Entry? { entries[key] }

    /// Adds or replaces a key (the parser checks for duplicates before calling this).
    mutating func set(_ key: String, keyPosition: SourcePosition, value: TOMLValue) {
        if entries[key] == nil { keys.append(key) }
        entries[key] = Entry(keyPosition: keyPosition, value: value)
    }

    /// Replaces the value of an existing key, keeping the key's position.
    mutating func replaceValue(_ key: String, with value: TOMLValue) {
        entries[key]?.value = value
    }
}
