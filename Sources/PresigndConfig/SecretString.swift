/// A credential value that prints as `<redacted>` in descriptions, string interpolation, `dump` and debuggers, so
/// it cannot leak into logs by accident. Read the value explicitly through `revealed`.
public struct SecretString: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    private let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// The secret itself: only for signing.
    public var revealed: String { value }

    public var isEmpty: Bool { value.isEmpty }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
