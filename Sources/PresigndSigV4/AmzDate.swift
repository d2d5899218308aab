#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A signing time: UTC epoch seconds and their `x-amz-date` form `yyyyMMdd'T'HHmmss'Z'` (§6).
///
/// The scope date (`dateStamp`) is cut from the same string, never read from a second clock (§1, §6).
/// The calendar is computed with Howard Hinnant's civil-from-days algorithm: no `DateFormatter`.
public struct AmzDate: Sendable, Equatable {
    /// Seconds since 1970-01-01T00:00:00Z.
    public let epochSeconds: Int
    /// `20150830T123600Z`.
    public let string: String
    /// `yyyymmdd`, the first 8 characters of `string` (§1: the scope date comes from the same string).
    public let dateStamp: String

    public init(epochSeconds: Int) {
        self.epochSeconds = epochSeconds
        let civil = CivilTime(epochSeconds: epochSeconds)
        self.string = civil.formatted(dateSeparator: nil, timeSeparator: nil, designator: UInt8(ascii: "T"))
        self.dateStamp = String(string.prefix(8))
    }

    /// Parses `yyyyMMdd'T'HHmmss'Z'`; nil unless every field is in range (Feb 29 only in leap years).
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? { Self.decimal(bytes[range]) }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        self.init(epochSeconds: civil.epochSeconds)
    }

    /// The value of ASCII decimal digits; nil when any byte is not one.
    static func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
        var result = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            result = result * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return result
    }

    /// The current time from `clock_gettime(CLOCK_REALTIME)`, truncated to the second.
    public static func now() -> AmzDate {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return AmzDate(epochSeconds: Int(spec.tv_sec))
    }

    /// ISO-8601 with separators, `2015-08-30T12:36:00Z`, for humans and JSON output.
    public var iso8601: String {
        CivilTime(epochSeconds: epochSeconds).formatted(
            dateSeparator: UInt8(ascii: "-"), timeSeparator: UInt8(ascii: ":"), designator: UInt8(ascii: "T"))
    }
}
