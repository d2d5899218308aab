import PresigndConfig
import Testing

@Suite struct TOMLParserTests {
    private func parse(_ text: String) -> (table: TOMLTable, errors: [String]) {
        let (table, errors) = TOMLParser.parse(text, file: "t.toml")
        return (table, errors.map { "\($0.line):\($0.column): \($0.message)" })
    }

    private func scalar(_ text: String) -> TOMLValue.Kind? {
        let (table, errors) = parse("v = \(text)")
        #expect(errors.isEmpty, "\(errors)")
        return table["v"]?.kind
    }

    @Test(arguments: [
        (#""plain""#, "plain"),
        (#""quote \" backslash \\ tab \t nl \n""#, "quote \" backslash \\ tab \t nl \n"),
        (#""\u00e9\U0001F600""#, "é😀"),
        (#"'C:\path\no escapes'"#, #"C:\path\no escapes"#),
        (##""# not a comment""##, "# not a comment"),
    ])
    func parsesStrings(source: String, expected: String) {
        guard case .string(let value)? = scalar(source) else {
            Issue.record("not a string")
            return
        }
        #expect(value == expected)
    }

    @Test(arguments: [
        ("42", 42), ("+7", 7), ("-17", -17), ("0", 0), ("1_000_000", 1_000_000), ("0x1F", 31), ("0o660", 0o660),
        ("0b101", 5), ("9223372036854775807", Int.max), ("-9223372036854775808", Int.min),
    ])
    func parsesIntegers(source: String, expected: Int) {
        guard case .integer(let value)? = scalar(source) else {
            Issue.record("not an integer")
            return
        }
        #expect(value == expected)
    }

    @Test func parsesBooleansArraysAndInlineTables() {
        let (table, errors) = parse(
            """
            yes = true
            no = false
            list = [
              "a",  # comment inside
              'b',
            ]
            empty = []
            point = { x = 1, y.z = "deep" }
            """)
        #expect(errors.isEmpty)
        guard case .boolean(true)? = table["yes"]?.kind, case .boolean(false)? = table["no"]?.kind else {
            Issue.record("booleans")
            return
        }
        guard case .array(let list)? = table["list"]?.kind, case .array(let empty)? = table["empty"]?.kind else {
            Issue.record("arrays")
            return
        }
        #expect(list.count == 2 && empty.isEmpty)
        #expect(list[1].position == SourcePosition(line: 5, column: 3))
        guard case .table(let point)? = table["point"]?.kind, case .table(let y)? = point["y"]?.kind,
            case .string("deep")? = y["z"]?.kind
        else {
            Issue.record("inline table")
            return
        }
    }

    @Test func buildsTablesDottedHeadersAndArraysOfTables() {
        let (table, errors) = parse(
            """
            # comment
            [server]
            listen = "x"
            [server.limits]
            max_header_count = 5
            [upstream."my r2"]
            provider = "r2"
            [[bucket]]
            name = "a"
            [[bucket]]
            name = "b"
            """)
        #expect(errors.isEmpty, "\(errors)")
        guard case .table(let server)? = table["server"]?.kind, case .table(let limits)? = server["limits"]?.kind,
            case .integer(5)? = limits["max_header_count"]?.kind
        else {
            Issue.record("nested tables")
            return
        }
        guard case .table(let upstream)? = table["upstream"]?.kind, upstream["my r2"] != nil else {
            Issue.record("quoted table key")
            return
        }
        let buckets = table["bucket"]?.tables ?? []
        #expect(buckets.count == 2)
        #expect(buckets.map(\.position) == [SourcePosition(line: 8, column: 1), SourcePosition(line: 10, column: 1)])
        #expect(table.entry("server")?.keyPosition == SourcePosition(line: 2, column: 2))
    }

    @Test(arguments: [
        ("a = 1\na = 2", "2:1: duplicate key 'a' (first defined at line 1, column 1)"),
        ("[t]\n[t]", "2:1: table [t] is already defined at line 1"),
        ("a = \"x\\qy\"", "1:7: invalid escape sequence in string (valid: \\\" \\\\ \\n \\t \\r \\uXXXX \\UXXXXXXXX)"),
        ("a = \"open", "1:5: unterminated string"),
        ("a = 'open", "1:5: unterminated string"),
        (
            "a = read-only",
            "1:5: expected a value (a quoted string, an integer, true, false, an array or an inline table); strings must be quoted"
        ),
        ("a = 0660", "1:5: leading zeros are not allowed in integers (write octal as 0o660, or as a string \"0660\")"),
        ("a = 1.5", "1:5: floating-point numbers are not supported; use an integer or a string"),
        ("a = 1__0", "1:5: misplaced '_' in integer"),
        ("a = 99999999999999999999", "1:5: integer is out of range"),
        ("a = 1 2", "1:7: unexpected text after the statement; expected a comment or the end of the line"),
        ("a 1", "1:3: expected '=' after the key"),
        ("a =", "1:4: expected a value after '='"),
        ("[t", "1:3: expected ']' to close the table header"),
        ("[[t]\n", "1:5: expected ']]' to close the table header"),
        ("a = [1, 2 3]", "1:11: expected ',' or ']' in the array"),
        ("a = \"\"\"x\"\"\"", "1:5: multi-line strings are not supported"),
        ("a = 1\n[a]", "2:2: 'a' is already defined as a value at line 1, column 1"),
        ("[[a]]\n[a]", "2:1: [a] is already an array of tables (line 1)"),
        ("a = {x = 1}\n[a.b]", "2:2: cannot add keys to inline table 'a'"),
        ("a = 2024-01-01", "1:5: dates and times are not supported; use a string"),
        ("é = 1", "1:1: expected a key"),
        ("k = \"é\\z\"", "1:7: invalid escape sequence in string (valid: \\\" \\\\ \\n \\t \\r \\uXXXX \\UXXXXXXXX)"),
    ])
    func reportsErrorsWithPositions(source: String, expected: String) {
        #expect(parse(source).errors == [expected])
    }

    @Test func recoversAtTheNextLineAndReportsEveryError() {
        let (table, errors) = parse(
            """
            a = "unterminated
            b = 2
            c = nope
            [t
            d = 4
            [u]
            e = [1,
              2 3,
              4]
            f = 6
            """)
        #expect(
            errors == [
                "1:5: unterminated string",
                "3:5: expected a value (a quoted string, an integer, true, false, an array or an inline table); "
                    + "strings must be quoted",
                "4:3: expected ']' to close the table header",
                "8:5: expected ',' or ']' in the array",
            ])
        #expect(table["b"] != nil)
        #expect(table["d"] == nil)  // lines under a broken header are checked, then dropped
        guard case .table(let u)? = table["u"]?.kind else {
            Issue.record("table u")
            return
        }
        #expect(u["f"] != nil)
        guard case .invalid? = u["e"]?.kind else {
            Issue.record("a key whose value failed keeps an invalid placeholder")
            return
        }
    }

    @Test func acceptsCRLFAndByteOrderMark() {
        let (table, errors) = parse("\u{FEFF}a = 1\r\nb = 2\r\n")
        #expect(errors.isEmpty)
        #expect(table.entry("b")?.keyPosition == SourcePosition(line: 2, column: 1))
    }
}
