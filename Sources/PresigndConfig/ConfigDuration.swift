/// A length of time from the configuration, in milliseconds.
///
/// Written as a string with units `ms`, `s`, `m`, `h`, `d`, alone or combined largest first (`"30s"`,
/// `"1h30m"`, `"500ms"`), or as a plain integer meaning seconds.
public struct ConfigDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int

    public init(milliseconds: Int) {
        self.milliseconds = milliseconds
    }

    public static func seconds(_ seconds: Int) -> ConfigDuration { ConfigDuration(milliseconds: seconds * 1000) }
    public static func minutes(_ minutes: Int) -> ConfigDuration { .seconds(minutes * 60) }
    public static func hours(_ hours: Int) -> ConfigDuration { .seconds(hours * 3600) }
    public static func days(_ days: Int) -> ConfigDuration { .seconds(days * 86400) }

    /// Whole seconds, rounded down (presigned URL expiry is in seconds).
    public var seconds: Int { milliseconds / 1000 }

    private static let units: [(suffix: String, milliseconds: Int)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1),
    ]

    /// Parses `"1h30m"`; nil if the text is not a duration (or overflows).
    public init?(parsing text: String) {
        var scalars = Substring(text)
        var total = 0
        var lastUnitRank = -1
        guard !scalars.isEmpty else { return nil }
        while !scalars.isEmpty {
            let digits = scalars.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty, digits.count <= 15, let number = Int(digits) else { return nil }
            scalars = scalars.dropFirst(digits.count)
            let unitText = scalars.prefix(while: { $0.isASCII && $0.isLetter })
            scalars = scalars.dropFirst(unitText.count)
            guard let rank = Self.units.firstIndex(where: { $0.suffix == unitText }), rank > lastUnitRank else {
                return nil
            }
            lastUnitRank = rank
            let (product, overflow) = number.multipliedReportingOverflow(by: Self.units[rank].milliseconds)
            guard !overflow, total <= Int.max - product else { return nil }
            total += product
        }
        self.milliseconds = total
    }

    public static func < (lhs: ConfigDuration, rhs: ConfigDuration) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// The shortest spelling the parser accepts back: `"1h30m"`, `"500ms"`, `"0s"`.
    public var description: String {
        guard milliseconds > 0 else { return "0s" }
        var rest = milliseconds
        var text = ""
        for unit in Self.units where rest >= unit.milliseconds {
            text += "\(rest / unit.milliseconds)\(unit.suffix)"
            rest %= unit.milliseconds
        }
        return text
    }
}
