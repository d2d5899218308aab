/// HTTP-dates (RFC 9110 §5.6.7) as seconds since the epoch, without Foundation or the C locale.
public enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Parses the IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`), the one S3 sends and clients echo back.
    /// The obsolete RFC 850 and asctime forms give nil: a conditional with them is then not answered locally,
    /// which is always safe (the answer is the full object, as if the field were absent).
    public static func parse(_ text: String) -> Int? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].hasSuffix(","), days.contains(String(parts[0].dropLast())),
            parts[5] == "GMT", parts[1].count == 2, let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), parts[3].count == 4, let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]),
            let minute = Int(clock[1]), let second = Int(clock[2]), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        return daysFromCivil(year: year, month: month + 1, day: day) * 86_400 + hour * 3600 + minute * 60 + second
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
