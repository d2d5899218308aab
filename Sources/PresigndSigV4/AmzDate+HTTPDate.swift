/// Reading HTTP dates (`Date`, `Retry-After`), as upstreams send them: `Sun, 06 Nov 1994 08:49:37 GMT`.
extension AmzDate {
    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    /// Parses an IMF-fixdate (RFC 9110 §5.6.7), the form every HTTP/1.1 server must send; nil for anything else
    /// (the obsolete RFC 850 and asctime forms included: S3 and R2 never send them, and a date read wrong would
    /// move the signing clock).
    public init?(httpDate text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "),
            bytes[7] == UInt8(ascii: " "), bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "),
            bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == UInt8(ascii: " "),
            bytes[26...28].elementsEqual("GMT".utf8)
        else { return nil }
        let monthText = String(decoding: bytes[8..<11], as: UTF8.self)
        guard let monthIndex = Self.monthNames.firstIndex(of: monthText),
            let day = Self.decimal(bytes[5..<7]), let year = Self.decimal(bytes[12..<16]),
            let hour = Self.decimal(bytes[17..<19]), let minute = Self.decimal(bytes[20..<22]),
            let second = Self.decimal(bytes[23..<25]),
            let civil = CivilTime(
                year: year, month: monthIndex + 1, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        self.init(epochSeconds: civil.epochSeconds)
    }
}
