/// Reading RFC 3339 / ISO 8601 timestamps, as credential sources write expirations
/// (`2026-03-01T00:15:00Z`, `2026-03-01T00:15:00.123Z`, `2026-03-01T01:15:00+01:00`).
extension AmzDate {
    /// Parses `yyyy-MM-ddTHH:mm:ss[.fraction](Z|±HH:MM)` (RFC 3339 §5.6; `t`/`z` and a space for `T` too); the
    /// fraction is dropped. Nil unless every field is in range.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func number(_ range: Range<Int>) -> Int? { Self.decimal(bytes[range]) }
        let separators: Set<UInt8> = [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")]
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), separators.contains(bytes[10]),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)),
                hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        self.init(epochSeconds: civil.epochSeconds - offset)
    }
}
