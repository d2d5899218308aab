import Testing

@testable import PresigndHTTP1

/// The word-at-a-time CR/LF scan agrees with a byte loop for every position, stop and byte value.
@Suite struct LineBreakScanTests {
    static func naive(_ bytes: [UInt8], from: Int, before stop: Int) -> Int {
        var index = from
        while index < stop, bytes[index] != 0x0D, bytes[index] != 0x0A { index += 1 }
        return index
    }

    @Test(arguments: [UInt8(0x0D), 0x0A, 0x00, 0x0C, 0x0E, 0x8D, 0x8A, 0xFF, 0x2D, 0x0B])
    func agreesWithAByteLoop(marker: UInt8) {
        for length in 0..<40 {
            for position in 0...length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                if position < length { bytes[position] = marker }
                bytes.withUnsafeBufferPointer { buffer in
                    for from in stride(from: 0, through: length, by: 3) {
                        for stop in from...length {
                            #expect(
                                HeadReader.skipToLineBreak(buffer, from: from, before: stop)
                                    == Self.naive(bytes, from: from, before: stop))
                        }
                    }
                }
            }
        }
    }
}

/// The word-at-a-time field-value check agrees with a byte loop for every byte value at every position.
@Suite struct FieldValueCheckTests {
    /// nil when some byte is not a field-value byte, else whether all are ASCII.
    static func naive(_ bytes: ArraySlice<UInt8>) -> Bool? {
        var highBits: UInt8 = 0
        for byte in bytes {
            guard byte == 0x09 || (byte >= 0x20 && byte != 0x7F) else { return nil }
            highBits |= byte
        }
        return highBits < 0x80
    }

    @Test(arguments: [UInt8(ascii: "a"), 0x09, 0x20, 0x7E, 0xC3])
    func agreesWithAByteLoop(background: UInt8) {
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 31] {
            for position in 0..<max(length, 1) {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: background, count: length)
                    if position < length { bytes[position] = UInt8(value) }
                    for start in 0...min(3, length) {
                        let expected = Self.naive(bytes[start...])
                        let got: Bool? = bytes.withUnsafeBufferPointer { buffer in
                            try? FieldLineParser.checkValueBytes(buffer, start..<length)
                        }
                        #expect(got == expected, "length \(length) byte \(value) at \(position) from \(start)")
                    }
                }
            }
        }
    }
}

/// The word-at-a-time field-name skip never passes a byte other than a letter, digit or `-`, and passes whole words
/// of them.
@Suite struct FieldNameSkipTests {
    static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D
    }

    @Test(arguments: [UInt8(ascii: "a"), UInt8(ascii: "Z"), UInt8(ascii: "0"), UInt8(ascii: "-")])
    func skipsExactlyTheWholeWordsOfNameBytes(background: UInt8) {
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 24, 31] {
            for position in 0..<max(length, 1) {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: background, count: length)
                    if position < length { bytes[position] = UInt8(value) }
                    let firstOther = bytes.firstIndex { !Self.isNameByte($0) } ?? length
                    let expected = firstOther / 8 * 8
                    let got = bytes.withUnsafeBufferPointer { FieldLineParser.skipNameWords($0) }
                    #expect(got == expected, "length \(length) byte \(value) at \(position)")
                }
            }
        }
    }
}

/// The one-pass field-line scan of a whole head (`nextField`) finds the same name, value and error as splitting the
/// line first (`split`), for every byte value at every position of names and values of many lengths.
@Suite struct FieldLineScanTests {
    typealias Outcome = Result<FieldOutcome, HTTPParseError>

    struct FieldOutcome: Equatable {
        var name: Range<Int>
        var value: Range<Int>
    }

    static func byNextField(_ head: [UInt8]) -> (Outcome, next: Int?) {
        head.withUnsafeBufferPointer { buffer in
            do throws(HTTPParseError) {
                guard let field = try FieldLineParser.nextField(buffer, from: 0) else {
                    return (.failure(.invalidHeaderName), nil)
                }
                return (.success(FieldOutcome(name: field.name, value: field.value)), field.next)
            } catch {
                return (.failure(error), nil)
            }
        }
    }

    static func bySplit(_ line: [UInt8]) -> Outcome {
        line.withUnsafeBufferPointer { buffer in
            do throws(HTTPParseError) {
                let field = try FieldLineParser.split(buffer)
                return .success(FieldOutcome(name: field.name, value: field.value))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test(arguments: ["X", "Content-Type", "x-amz-meta-a-long-name"])
    func agreesWithSplittingTheLineFirst(name: String) {
        for valueLength in [0, 1, 5, 8, 13, 16, 21] {
            let plain = Array(name.utf8) + Array(": ".utf8) + [UInt8](repeating: UInt8(ascii: "v"), count: valueLength)
            for position in 0..<plain.count {
                for value in 0...255 where value != 0x0D && value != 0x0A {
                    var line = plain
                    line[position] = UInt8(value)
                    let head = line + Array("\r\nNext: field\r\n\r\n".utf8)
                    let (got, next) = Self.byNextField(head)
                    let expected = Self.bySplit(line)
                    #expect(got == expected, "\(name) value length \(valueLength): byte \(value) at \(position)")
                    if case .success = got { #expect(next == line.count + 2) }
                }
            }
        }
    }

    @Test func endsAtTheEmptyLineAndKeepsObsTextThatIsUTF8() throws {
        let head = Array("A: caf\u{E9} \t\r\nB:\r\n\r\n".utf8)
        try head.withUnsafeBufferPointer { buffer in
            let first = try #require(try FieldLineParser.nextField(buffer, from: 0))
            #expect(Array(buffer[first.value]) == Array("caf\u{E9}".utf8))
            let second = try #require(try FieldLineParser.nextField(buffer, from: first.next))
            #expect(second.value.isEmpty && second.name == first.next..<(first.next + 1))
            #expect(try FieldLineParser.nextField(buffer, from: second.next) == nil)
        }
        let invalidUTF8 = Array("A: ".utf8) + [0xFF] + Array("\r\n\r\n".utf8)
        #expect(throws: HTTPParseError.invalidHeaderValue) {
            try invalidUTF8.withUnsafeBufferPointer { try FieldLineParser.nextField($0, from: 0) }
        }
    }
}
