/// HTTP-dates (RFC 9110 §5.6.7) as seconds since the epoch, without Foundation or the C locale.
public enum HTTPDate {

    /// Parses the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`), the one S3 sends and clients echo back.
    /// The obsolete RFC 850 and asctime forms give nil: a conditional with them is then not answered locally,
    /// which is always safe (the answer is the full object, as if the field were absent).
    public static func parse(_ text: String) -> Int? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// `parse` on the field's bytes, by position (the form has one length): no substrings, no allocation.
    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        // 0         1         2
        // 01234567890123456789012345678
        // Sun, 06 Nov 1994 08:49:37 GMT
        guard bytes.count == 29, bytes[3] == 0x2C, bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
            bytes[16] == 0x20, bytes[19] == 0x3A, bytes[22] == 0x3A, bytes[25] == 0x20, bytes[26] == 0x47,
            bytes[27] == 0x4D, bytes[28] == 0x54,
            index(of: bytes, at: 0, in: dayNames) != nil,
            let month = index(of: bytes, at: 8, in: monthNames),
            let day = digits(bytes, at: 5, count: 2), let year = digits(bytes, at: 12, count: 4),
            let hour = digits(bytes, at: 17, count: 2), let minute = digits(bytes, at: 20, count: 2),
            let second = digits(bytes, at: 23, count: 2),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static let monthNames = Array("JanFebMarAprMayJunJulAugSepOctNovDec".utf8)
    private static let dayNames = Array("MonTueWedThuFriSatSun".utf8)

    /// Which three-letter name of `names` the bytes at `offset` are (its index), nil for none.
    private static func index(of bytes: UnsafeBufferPointer<UInt8>, at offset: Int, in names: [UInt8]) -> Int? {
        var name = 0
        while name * 3 < names.count {
            if bytes[offset] == names[name * 3] && bytes[offset + 1] == names[name * 3 + 1]
                && bytes[offset + 2] == names[name * 3 + 2]
            {
                return name
            }
            name += 1
        }
        return nil
    }

    /// The decimal number of `count` ASCII digits at `offset`; nil when one is not a digit.
    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, count: Int) -> Int? {
        var value = 0
        for position in offset..<offset + count {
            let byte = bytes[position]
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
