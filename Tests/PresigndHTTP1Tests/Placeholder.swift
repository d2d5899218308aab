import Testing

@Test func placeholderHTTP1() { #expect(Bool(true)) }
