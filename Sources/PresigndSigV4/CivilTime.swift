/// A proleptic Gregorian UTC calendar time, converted to and from epoch seconds without Foundation.
///
/// Algorithms: Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms" (`days_from_civil`,
/// `civil_from_days`), valid for every year representable in `Int`.
struct CivilTime: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    init(epochSeconds: Int) {
        let days = Self.floorDivide(epochSeconds, 86_400)
        let secondsOfDay = epochSeconds - days * 86_400
        hour = secondsOfDay / 3600
        minute = secondsOfDay % 3600 / 60
        second = secondsOfDay % 60
        // civil_from_days
        let z = days + 719_468
        let era = Self.floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Validating initializer: nil for month 13, April 31, Feb 29 in a common year, hour 24 and so on.
    init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year: year, month: month),
            (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// days_from_civil, then the time of day.
    var epochSeconds: Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = Self.floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    static func isLeapYear(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func floorDivide(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : (a - b + 1) / b }

    /// Fixed-width digits with optional separators; years outside 0...9999 are clamped to 4 digits.
    func formatted(dateSeparator: UInt8?, timeSeparator: UInt8?, designator: UInt8) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(20)
        func append(_ value: Int, width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = max(0, value)
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        append(year, width: 4)
        if let dateSeparator { out.append(dateSeparator) }
        append(month, width: 2)
        if let dateSeparator { out.append(dateSeparator) }
        append(day, width: 2)
        out.append(designator)
        append(hour, width: 2)
        if let timeSeparator { out.append(timeSeparator) }
        append(minute, width: 2)
        if let timeSeparator { out.append(timeSeparator) }
        append(second, width: 2)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }
}
