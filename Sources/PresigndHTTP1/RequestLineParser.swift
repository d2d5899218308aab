/// Parses `request-line = method SP request-target SP HTTP-version` (RFC 9112 §3), exactly: single spaces, a
/// token method, a visible-ASCII target in a form the method allows.
enum RequestLineParser {
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError)
        -> (method: String, target: String, version: HTTPVersion)
    {
        guard let firstSpace = line.firstIndex(of: ASCII.space),
            let lastSpace = line.lastIndex(of: ASCII.space),
            firstSpace > 0, lastSpace > firstSpace + 1
        else { throw .invalidRequestLine }
        let method = UnsafeBufferPointer(rebasing: line[..<firstSpace])
        let target = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<lastSpace])
        guard method.allSatisfy(ASCII.isTokenChar) else { throw .invalidMethod }
        let version = try HTTPVersion.parse(
            UnsafeBufferPointer(rebasing: line[(lastSpace + 1)...]), malformed: .invalidVersion)
        try checkTarget(target, method: method)
        return (
            ASCII.internedString(line, 0..<firstSpace), ASCII.string(line, (firstSpace + 1)..<lastSpace), version
        )
    }

    /// RFC 9112 §3.2: bytes are VCHAR without `#` (no fragment is sent); the form matches the method.
    private static func checkTarget(_ target: UnsafeBufferPointer<UInt8>, method: UnsafeBufferPointer<UInt8>)
        throws(HTTPParseError)
    {
        for byte in target where !ASCII.isVisible(byte) || byte == UInt8(ascii: "#") { throw .invalidTarget }
        let isConnect = method.elementsEqual("CONNECT".utf8)
        let first = target[0]
        if target.count == 1, first == UInt8(ascii: "*") {
            // §3.2.4 asterisk-form: OPTIONS only.
            guard method.elementsEqual("OPTIONS".utf8) else { throw .invalidTarget }
        } else if first == UInt8(ascii: "/") {
            // §3.2.1 origin-form.
            guard !isConnect else { throw .invalidTarget }
        } else if isConnect {
            // §3.2.3 authority-form: host ":" port.
            guard let colon = target.lastIndex(of: ASCII.colon), colon > 0, colon < target.count - 1,
                target[(colon + 1)...].allSatisfy(ASCII.isDigit),
                !target.contains(UInt8(ascii: "/"))
            else { throw .invalidTarget }
        } else {
            // §3.2.2 absolute-form: scheme ":" hier-part, scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
            guard ASCII.isAlpha(first), let colon = target.firstIndex(of: ASCII.colon),
                target[..<colon].allSatisfy({ ASCII.isAlpha($0) || ASCII.isDigit($0) || "+-.".utf8.contains($0) })
            else { throw .invalidTarget }
        }
    }
}
