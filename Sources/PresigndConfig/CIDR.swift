/// An address range such as `10.0.0.0/8` or `fd00::/8`, for `allowed_clients`. A bare address means a single host.
public struct CIDR: Sendable, Hashable, CustomStringConvertible {
    /// The network address, with host bits cleared.
    public var network: IPAddress
    /// Leading bits that must match: 0...32 for IPv4, 0...128 for IPv6.
    public var prefixLength: Int

    /// Parses `"ADDRESS/BITS"` or `"ADDRESS"`; host bits are cleared (`10.1.2.3/8` means `10.0.0.0/8`).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let bits = Int(parts[1]), bits <= maximum else {
                return nil
            }
            length = bits
        }
        network = IPAddress.masked(address, prefixLength: length)
        prefixLength = length
    }

    /// Whether `address` is inside the range. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, as a dual-stack
    /// socket reports IPv4 clients) matches IPv4 ranges.
    public func contains(_ address: IPAddress) -> Bool {
        var candidate = address
        if network.isIPv4, !address.isIPv4,
            address.bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF])
        {
            candidate = IPAddress(bytes: Array(address.bytes.suffix(4)))
        }
        guard candidate.bytes.count == network.bytes.count else { return false }
        return IPAddress.masked(candidate, prefixLength: prefixLength) == network
    }

    public var description: String { "\(network)/\(prefixLength)" }
}

extension IPAddress {
    /// An address from raw bytes (4 or 16).
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address has 4 or 16 bytes")
        self.bytes = bytes
    }

    static func masked(_ address: IPAddress, prefixLength: Int) -> IPAddress {
        var bytes = address.bytes
        for index in bytes.indices {
            let keep = max(0, min(8, prefixLength - index * 8))
            bytes[index] &= keep == 0 ? 0 : ~UInt8(0) << (8 - keep)
        }
        return IPAddress(bytes: bytes)
    }
}
