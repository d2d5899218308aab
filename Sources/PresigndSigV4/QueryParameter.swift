/// One query parameter, with its name and value already percent-decoded (§3 step 3).
public struct QueryParameter: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
