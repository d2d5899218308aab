import Testing

@Test func placeholderConfig() { #expect(Bool(true)) }
