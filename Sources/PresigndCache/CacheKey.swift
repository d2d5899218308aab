import PresigndSigV4

/// Where an object's entry lives in the store: the SHA-256 of its encoded `ObjectName`, in hex.
///
/// The hash only places files. Every lookup also compares the full `ObjectName` stored in the entry's metadata,
/// so even a collision could not serve one bucket's object to another (it would be a miss and a replacement).
public struct CacheKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 64 lower-case hex digits.
    public let hex: String
    /// The hash's first 64 bits (its first 16 hex digits): what a table of keys hashes, instead of the 64
    /// characters (the store's tables are looked up several times a request). Derived from `hex`.
    private let prefix: UInt64

    public init(_ name: ObjectName) throws(SigV4Error) {
        self.init(validHex: try sha256Hex(name.encoded))
    }

    /// A key read back from a directory name; nil unless it is 64 lower-case hex digits.
    init?(hex: String) {
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return nil
        }
        self.init(validHex: hex)
    }

    private init(validHex hex: String) {
        self.hex = hex
        var prefix: UInt64 = 0
        for byte in hex.utf8.prefix(16) { prefix = prefix << 4 | UInt64(byte <= 57 ? byte - 48 : byte - 87) }
        self.prefix = prefix
    }

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool { lhs.hex == rhs.hex }

    public func hash(into hasher: inout Hasher) { hasher.combine(prefix) }

    /// The fan-out directory (first two hex digits), so no directory holds more than 1/256 of the entries.
    var shard: String { String(hex.prefix(2)) }

    public var description: String { hex }

    /// A bucket in `0..<count` (from the hash's first 8 hex digits: evenly spread).
    func bucket(_ count: Int) -> Int {
        Int(prefix >> 32) % count  // the first 8 hex digits
    }

    public static func < (lhs: CacheKey, rhs: CacheKey) -> Bool { lhs.hex < rhs.hex }

    /// The first 16 hex digits of the version's SHA-256: slice files carry it in their names.
    static func versionTag(_ version: ObjectVersion) throws(SigV4Error) -> String {
        String(try sha256Hex(version.encoded).prefix(16))
    }
}
