import Testing

@Test func placeholderSigV4() { #expect(Bool(true)) }
