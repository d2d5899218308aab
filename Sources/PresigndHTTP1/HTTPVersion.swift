/// An HTTP version as written in a start line (`HTTP-version = "HTTP/" DIGIT "." DIGIT`, RFC 9112 §2.3).
///
/// The decoders accept major version 1 only. A higher 1.x minor version is read as 1.1, the highest minor version
/// this codec implements (RFC 9110 §2.5); any other major version is `HTTPParseError.unsupportedVersion` (505).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0: connections close after each message unless `Connection: keep-alive` (RFC 9112 §9.3).
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1: persistent connections by default (RFC 9112 §9.3).
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }

    /// Parses exactly `HTTP/D.D` (case-sensitive, RFC 9112 §2.3).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, malformed: HTTPParseError) throws(HTTPParseError)
        -> HTTPVersion
    {
        guard bytes.count == 8,
            bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
            bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/"), bytes[6] == UInt8(ascii: "."),
            ASCII.isDigit(bytes[5]), ASCII.isDigit(bytes[7])
        else { throw malformed }
        let major = Int(bytes[5] &- UInt8(ascii: "0"))
        let minor = Int(bytes[7] &- UInt8(ascii: "0"))
        guard major == 1 else { throw .unsupportedVersion }
        return minor == 0 ? .http1_0 : .http1_1  // RFC 9110 §2.5: 1.2+ is processed as 1.1
    }
}
