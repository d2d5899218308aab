/// Integers: decimal, hexadecimal, octal and binary, with `_` separators; floats and dates are refused clearly.
extension TOMLParser {
    /// Decimal with `_` between digits and an optional sign, or `0x`/`0o`/`0b` (TOML 1.0 §Integer).
    mutating func parseInteger() throws(TOMLParseFailure) -> Int {
        let start = position
        let from = index
        while let byte = peek(), !Self.isDelimiter(byte) { advance() }
        var token = Array(bytes[from..<index])
        let isNegative = token.first == UInt8(ascii: "-")
        if token.first == UInt8(ascii: "-") || token.first == UInt8(ascii: "+") { token.removeFirst() }
        var radix = 10
        if token.count > 2, token[0] == UInt8(ascii: "0"), from == index - token.count {
            switch token[1] {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: break
            }
            if radix != 10 { token.removeFirst(2) }
        }
        if radix == 10 {
            if token.contains(where: { $0 == UInt8(ascii: ":") }) || (token.count > 4 && token[4] == UInt8(ascii: "-"))
            {
                throw TOMLParseFailure(start, "dates and times are not supported; use a string")
            }
            if token.contains(where: { ".eE".utf8.contains($0) }) && !token.isEmpty
                && token.allSatisfy({ "0123456789_.eE+-".utf8.contains($0) })
            {
                throw TOMLParseFailure(start, "floating-point numbers are not supported; use an integer or a string")
            }
            if token.count > 1, token[0] == UInt8(ascii: "0") {
                throw TOMLParseFailure(
                    start, "leading zeros are not allowed in integers (write octal as 0o660, or as a string \"0660\")")
            }
        }
        var value = 0
        var previousWasDigit = false
        for byte in token {
            if byte == UInt8(ascii: "_") {
                guard previousWasDigit else { throw TOMLParseFailure(start, "misplaced '_' in integer") }
                previousWasDigit = false
                continue
            }
            guard let digit = Self.digitValue(byte), digit < radix else {
                throw TOMLParseFailure(start, "invalid integer")
            }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: radix)
            let (sum, overflow2) = shifted.addingReportingOverflow(isNegative ? -digit : digit)
            guard !overflow1, !overflow2 else { throw TOMLParseFailure(start, "integer is out of range") }
            value = sum
            previousWasDigit = true
        }
        guard previousWasDigit else {
            throw TOMLParseFailure(start, token.isEmpty ? "invalid integer" : "misplaced '_' in integer")
        }
        return value
    }

    static func digitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}
