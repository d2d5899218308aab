/// Header (or trailer) fields in order (RFC 9110 §5). Names keep the case they were received or added with;
/// repeated names stay separate fields in their order, as a proxy must keep them (RFC 9110 §5.3); lookups
/// compare names case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    /// A nominal type rather than the tuple: an array of it is destroyed by compiled code, while an
    /// array of `(String, String)` tuples goes through the runtime's generic tuple witnesses
    /// (measurable per request on the proxy's hot path).
    ///
    /// Reachable from inlinable code: iteration and lookups are inlined into their callers (the rewriter, the
    /// policy's header checks, the signer), so a field is read in place instead of being retained and released
    /// by a call into this module for every field of every request.
    @usableFromInline
    internal struct Field: Equatable, Sendable {
        @usableFromInline var name: String
        @usableFromInline var value: String

        @usableFromInline
        init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    @usableFromInline
    internal var fields: [Field]

    public init() { fields = [] }

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    /// Allows repeated names: `["X-A": "1", "X-A": "2"]` holds two fields.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Sets the first field named `name` to `value` and removes the others, or appends one.
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let first = fields.firstIndex(where: { ASCII.equalsIgnoringCase($0.name, name) }) else {
            return add(name: name, value: value)
        }
        fields[first].value = value
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if ASCII.equalsIgnoringCase(fields[index].name, name) {
                fields.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { ASCII.equalsIgnoringCase($0.name, name) }
    }

    /// The value of the first field named `name`.
    @inlinable
    public subscript(name: String) -> String? {
        fields.first { ASCII.equalsIgnoringCase($0.name, name) }?.value
    }

    /// The values of every field named `name`, in order, each as received (lists are not split).
    /// How many fields have this name.
    public func count(of name: String) -> Int {
        var count = 0
        for field in fields where ASCII.equalsIgnoringCase(field.name, name) { count += 1 }
        return count
    }

    public mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    public func values(_ name: String) -> [String] {
        fields.compactMap { ASCII.equalsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    @inlinable
    public func contains(name: String) -> Bool {
        fields.contains { ASCII.equalsIgnoringCase($0.name, name) }
    }

    public struct Iterator: IteratorProtocol {
        @usableFromInline
        internal var fields: IndexingIterator<[Field]>

        @usableFromInline
        init(fields: IndexingIterator<[Field]>) {
            self.fields = fields
        }

        @inlinable
        public mutating func next() -> Element? {
            guard let field = fields.next() else { return nil }
            return (name: field.name, value: field.value)
        }
    }

    @inlinable
    public func makeIterator() -> Iterator { Iterator(fields: fields.makeIterator()) }

    public var underestimatedCount: Int { fields.count }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields == rhs.fields
    }
}
