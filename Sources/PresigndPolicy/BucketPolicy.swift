/// One bucket's policy as the engine reads it: `access`, `allowed_actions`, `denied_actions`,
/// `allowed_methods` (the old key, kept as an alias) and `allowed_prefixes`.
public struct BucketPolicy: Sendable, Hashable {
    /// The bucket's name, for messages.
    public var bucket: String
    public var access: AccessLevel
    /// Granted beyond `access`.
    public var allowedActions: [ActionPattern] = []
    /// Refused even when `access` or `allowedActions` grants them; a denial always wins.
    public var deniedActions: [ActionPattern] = []
    /// Upper-case methods; empty means any. An operation passes when its `aliasMethod` is listed.
    public var allowedMethods: Set<String> = []
    /// Key prefixes; empty means every key.
    public var allowedPrefixes: [String] = []

    public init(bucket: String, access: AccessLevel) {
        self.bucket = bucket
        self.access = access
    }

    /// Whether `key` (decoded bytes) is inside the prefixes: byte-wise, never normalized.
    public func allowsKey(_ key: some Collection<UInt8>) -> Bool {
        allowedPrefixes.isEmpty || allowedPrefixes.contains { key.starts(with: $0.utf8) }
    }
}
