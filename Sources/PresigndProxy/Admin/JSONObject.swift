/// A flat JSON object (RFC 8259) of strings, numbers, booleans, nulls and arrays of strings: all the presign and
/// credentials APIs read.
///
/// Nested objects and other arrays are rejected with the member's name, so an error can name the field. Numbers keep
/// their text; `integer` accepts only whole numbers without exponent or fraction.
struct JSONObject: Equatable {
    enum Value: Equatable {
        case string(String)
        /// The number as written (`3600`, `-1`, `1.5e3`).
        case number(String)
        case bool(Bool)
        case null
        /// An array whose elements are all strings (`"prefixes": ["a/", "b/"]`).
        case strings([String])
    }

    /// A syntax error: a message and, when inside a member, its name.
    struct ParseError: Error, Equatable {
        var message: String
        var field: String?
    }

    /// Members in document order; a repeated name is an error (RFC 8259 §4 leaves it open; we refuse).
    private(set) var members: [(name: String, value: Value)] = []

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.elementsEqual(rhs.members) { $0.name == $1.name && $0.value == $1.value }
    }

    subscript(name: String) -> Value? { members.first { $0.name == name }?.value }

    var names: [String] { members.map(\.name) }

    /// Parses one object, with optional whitespace around it and nothing else.
    static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONObject {
        var parser = Parser(bytes: bytes)
        return try parser.object()
    }

    /// A whole number, or nil.
    static func integer(_ text: String) -> Int? {
        var digits = Substring(text)
        if digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func object() throws(ParseError) -> JSONObject {
            var result = JSONObject()
            skipSpace()
            guard take(UInt8(ascii: "{")) else { throw ParseError(message: "the body must be a JSON object") }
            skipSpace()
            if !take(UInt8(ascii: "}")) {
                repeat {
                    skipSpace()
                    guard peek == UInt8(ascii: "\"") else { throw ParseError(message: "expected a member name") }
                    let name = try string(field: nil)
                    skipSpace()
                    guard take(UInt8(ascii: ":")) else { throw ParseError(message: "expected ':'", field: name) }
                    skipSpace()
                    let value = try self.value(field: name)
                    if result[name] != nil { throw ParseError(message: "member appears twice", field: name) }
                    result.members.append((name, value))
                    skipSpace()
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { throw ParseError(message: "expected ',' or '}'") }
            }
            skipSpace()
            guard index == bytes.count else { throw ParseError(message: "unexpected text after the object") }
            return result
        }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func literal(_ text: String) -> Bool {
            let word = Array(text.utf8)
            guard bytes.count - index >= word.count, Array(bytes[index..<index + word.count]) == word else {
                return false
            }
            index += word.count
            return true
        }

        mutating func value(field: String) throws(ParseError) -> Value {
            switch peek {
            case UInt8(ascii: "\""): return .string(try string(field: field))
            case UInt8(ascii: "["):
                index += 1
                var elements: [String] = []
                skipSpace()
                if take(UInt8(ascii: "]")) { return .strings(elements) }
                repeat {
                    skipSpace()
                    guard peek == UInt8(ascii: "\"") else {
                        throw ParseError(message: "must be an array of strings", field: field)
                    }
                    elements.append(try string(field: field))
                    skipSpace()
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "]")) else { throw ParseError(message: "expected , or ]", field: field) }
                return .strings(elements)
            case UInt8(ascii: "{"):
                throw ParseError(message: "must be a string, number, boolean or array of strings", field: field)
            case UInt8(ascii: "t"): if literal("true") { return .bool(true) }
            case UInt8(ascii: "f"): if literal("false") { return .bool(false) }
            case UInt8(ascii: "n"): if literal("null") { return .null }
            default: return .number(try number(field: field))
            }
            throw ParseError(message: "invalid value", field: field)
        }

        /// RFC 8259 §6 number grammar.
        mutating func number(field: String) throws(ParseError) -> String {
            let start = index
            _ = take(UInt8(ascii: "-"))
            func digits(_ parser: inout Parser) -> Int {
                var count = 0
                while let byte = parser.peek, byte >= 0x30 && byte <= 0x39 {
                    parser.index += 1
                    count += 1
                }
                return count
            }
            if take(UInt8(ascii: "0")) {
                // no leading zeros
            } else if digits(&self) == 0 {
                throw ParseError(message: "invalid value", field: field)
            }
            if take(UInt8(ascii: ".")), digits(&self) == 0 { throw ParseError(message: "invalid number", field: field) }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                if digits(&self) == 0 { throw ParseError(message: "invalid number", field: field) }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// RFC 8259 §7 string, escapes decoded; `\u` surrogate pairs joined, lone surrogates refused.
        mutating func string(field: String?) throws(ParseError) -> String {
            index += 1  // opening quote
            var output: [UInt8] = []
            while true {
                guard let byte = peek else { throw ParseError(message: "unterminated string", field: field) }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: output, as: UTF8.self) else {
                        throw ParseError(message: "string is not valid UTF-8", field: field)
                    }
                    return text
                case UInt8(ascii: "\\"):
                    guard let escape = peek else { throw ParseError(message: "unterminated string", field: field) }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                    case UInt8(ascii: "b"): output.append(0x08)
                    case UInt8(ascii: "f"): output.append(0x0C)
                    case UInt8(ascii: "n"): output.append(0x0A)
                    case UInt8(ascii: "r"): output.append(0x0D)
                    case UInt8(ascii: "t"): output.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4(field: field)
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard literal("\\u") else { throw ParseError(message: "lone surrogate", field: field) }
                            let low = try hex4(field: field)
                            guard (0xDC00...0xDFFF).contains(low) else {
                                throw ParseError(message: "lone surrogate", field: field)
                            }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else {
                            throw ParseError(message: "lone surrogate", field: field)
                        }
                        output.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default: throw ParseError(message: "invalid escape", field: field)
                    }
                case 0x00..<0x20: throw ParseError(message: "control character in string", field: field)
                default: output.append(byte)
                }
            }
        }

        mutating func hex4(field: String?) throws(ParseError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw ParseError(message: "invalid \\u escape", field: field) }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x41...0x46: digit = byte - 0x41 + 10
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: throw ParseError(message: "invalid \\u escape", field: field)
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }
}

/// A tiny JSON writer: strings escaped per RFC 8259 §7.
enum JSONWriter {
    enum Value {
        case string(String)
        case int(Int)
        case object([(String, Value)])
    }

    static func render(_ members: [(String, Value)]) -> String {
        render(.object(members))
    }

    static func render(_ value: Value) -> String {
        switch value {
        case .string(let text): quote(text)
        case .int(let number): String(number)
        case .object(let members): "{" + members.map { quote($0.0) + ": " + render($0.1) }.joined(separator: ", ") + "}"
        }
    }

    static func quote(_ text: String) -> String {
        JSONText.quoted(text)
    }
}
