import Testing

@Test func placeholderProxy() { #expect(Bool(true)) }
