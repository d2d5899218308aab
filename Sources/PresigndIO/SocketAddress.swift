#if canImport(Glibc)
    import Glibc
#endif

/// A peer or local IP address with its port, as the kernel reports it.
public struct SocketAddress: CustomStringConvertible, Sendable {
    /// 4 or 16 address bytes; empty for non-IP (unix) sockets.
    public let bytes: [UInt8]
    public let port: Int

    public init(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            }
            bytes = withUnsafeBytes(of: address.sin_addr) { Array($0) }
            port = Int(UInt16(bigEndian: address.sin_port))
        case AF_INET6:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
            }
            bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
            port = Int(UInt16(bigEndian: address.sin6_port))
        default:
            bytes = []
            port = 0
        }
    }

    public init(sockaddr pointer: UnsafePointer<sockaddr>, length: Int32) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in
            let count = min(Int(length), raw.count)
            raw.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count))
        }
        self.init(storage)
    }

    /// True for 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 and unix sockets.
    public var isLoopback: Bool {
        switch bytes.count {
        case 0: return true
        case 4: return bytes[0] == 127
        case 16:
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        default: return false
        }
    }

    /// The address without the port (`127.0.0.1`, `::1`), or `unix`.
    public var host: String {
        var buffer = [CChar](repeating: 0, count: 64)
        switch bytes.count {
        case 4, 16:
            let family = bytes.count == 4 ? AF_INET : AF_INET6
            let ok = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, 64) != nil }
            guard ok else { return "?" }
            let length = buffer.firstIndex(of: 0) ?? buffer.count
            return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        default:
            return "unix"
        }
    }

    public var description: String {
        switch bytes.count {
        case 4: "\(host):\(port)"
        case 16: "[\(host)]:\(port)"
        default: "unix"
        }
    }
}
