/// Sizes from the configuration, in bytes.
///
/// Written as a string with a unit, binary (`KiB MiB GiB TiB`) or decimal (`KB MB GB TB`), or `B`, optionally
/// separated by a space (`"64KiB"`, `"5 GiB"`), or as a plain integer meaning bytes.
public enum ByteSize {
    public static let kibibyte = 1024
    public static let mebibyte = 1024 * 1024
    public static let gibibyte = 1024 * 1024 * 1024

    private static let units: [String: Int] = [
        "B": 1,
        "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
        "KB": 1000, "MB": 1_000_000, "GB": 1_000_000_000, "TB": 1_000_000_000_000,
    ]

    /// Parses `"64KiB"` to 65536; nil if the text is not a size (or overflows).
    public static func parse(_ text: String) -> Int? {
        let digits = text.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count <= 18, let number = Int(digits) else { return nil }
        var unit = text.dropFirst(digits.count)
        if unit.first == " " && unit.count > 1 { unit = unit.dropFirst() }
        guard let multiplier = unit.isEmpty ? 1 : units[String(unit)] else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : bytes
    }

    /// A readable spelling: the largest binary unit that divides the size exactly (`"64KiB"`, `"1000B"`).
    public static func format(_ bytes: Int) -> String {
        for (suffix, size) in [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes >= size && bytes % size == 0 {
            return "\(bytes / size)\(suffix)"
        }
        return "\(bytes)B"
    }
}
