import PresigndConfig
import Testing

@Suite struct AddressTests {
    @Test(arguments: [
        ("127.0.0.1:8080", ListenAddress.tcp(host: "127.0.0.1", port: 8080), true),
        ("[::1]:8080", .tcp(host: "::1", port: 8080), true),
        ("localhost:0", .tcp(host: "localhost", port: 0), true),
        ("0.0.0.0:80", .tcp(host: "0.0.0.0", port: 80), false),
        ("[::]:8080", .tcp(host: "::", port: 8080), false),
        ("192.168.1.10:8080", .tcp(host: "192.168.1.10", port: 8080), false),
        ("proxy.internal:8080", .tcp(host: "proxy.internal", port: 8080), false),
        ("unix:/run/presignd/presignd.sock", .unix(path: "/run/presignd/presignd.sock"), true),
    ])
    func parsesListenAddresses(text: String, expected: ListenAddress, isLoopback: Bool) throws {
        let address = try ListenAddress.parse(text).get()
        #expect(address == expected)
        #expect(address.isLoopback == isLoopback)
        #expect(address.description == text)
    }

    @Test(arguments: [
        "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "::1:8080", "[::1:8080", "[127.0.0.1]:80", "unix:relative.sock",
        "host name:80", "999.0.0.1:80",
    ])
    func rejectsMalformedListenAddresses(text: String) {
        #expect(throws: AddressSyntaxError.self) { try ListenAddress.parse(text).get() }
    }

    @Test func requiresAllowRemoteForNonLoopbackListeners() throws {
        let text = """
            [server]
            listen = ["0.0.0.0:8080", "127.0.0.1:8081"]
            admin_listen = "[::]:9180"
            """ + "\n" + minimalUpstream
        #expect(
            described(errors(text)) == [
                "2:11: listen address 0.0.0.0:8080 is not loopback; set allow_remote = true in [server] to expose "
                    + "presignd (anyone who can reach it can use its keys)",
                "3:16: admin_listen address [::]:9180 is not loopback; set allow_remote = true in [server] to expose "
                    + "presignd (anyone who can reach it can use its keys)",
            ])
        let allowed = try #require(
            loaded(text.replacingOccurrences(of: "[server]\n", with: "[server]\nallow_remote = true\n")))
        #expect(allowed.warnings.count == 2)
        #expect(allowed.warnings.allSatisfy { $0.severity == .warning && $0.description.contains(": warning: ") })
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.1.2.3", true), ("10.0.0.0/8", "11.0.0.1", false), ("10.1.2.3/8", "10.9.9.9", true),
        ("192.168.1.7", "192.168.1.7", true), ("192.168.1.7", "192.168.1.8", false), ("0.0.0.0/0", "8.8.8.8", true),
        ("fd00::/8", "fd12:3456::1", true), ("fd00::/8", "fe80::1", false), ("::1", "::1", true),
        ("10.0.0.0/8", "::ffff:10.0.0.1", true), ("10.0.0.0/8", "::1", false),
    ])
    func matchesCIDRRanges(range: String, address: String, contained: Bool) throws {
        let cidr = try #require(CIDR(range))
        let ip = try #require(IPAddress(address))
        #expect(cidr.contains(ip) == contained)
    }

    @Test(arguments: ["10.0.0.0/33", "fd00::/129", "10.0.0/8", "x", "10.0.0.0/", "1:2:3:4:5:6:7:8:9", "1::2::3"])
    func rejectsMalformedCIDRs(text: String) {
        #expect(CIDR(text) == nil)
    }

    @Test(arguments: [
        ("::1", "::1"), ("fe80:0:0:0:0:0:0:1", "fe80::1"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("::ffff:10.0.0.1", "::ffff:a00:1"), ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
    ])
    func describesIPv6Compressed(text: String, expected: String) {
        #expect(IPAddress(text)?.description == expected)
    }

    @Test(arguments: [
        ("https://s3.amazonaws.com", "s3.amazonaws.com", 443, "s3.amazonaws.com"),
        ("https://minio.internal:9000/", "minio.internal", 9000, "minio.internal:9000"),
        ("http://127.0.0.1:9000", "127.0.0.1", 9000, "127.0.0.1:9000"),
        ("http://localhost:80", "localhost", 80, "localhost"),
        ("https://[::1]:8443", "::1", 8443, "[::1]:8443"),
        ("https://[2001:db8::1]", "2001:db8::1", 443, "[2001:db8::1]"),
    ])
    func parsesEndpoints(text: String, host: String, port: Int, hostHeader: String) throws {
        let endpoint = try Endpoint.parse(text).get()
        #expect(endpoint.host == host && endpoint.port == port && endpoint.hostHeader == hostHeader)
    }

    @Test(arguments: ["s3.amazonaws.com", "ftp://x", "https://x/bucket", "https://user@x", "https://x:0", "https://"])
    func rejectsMalformedEndpoints(text: String) {
        #expect(throws: AddressSyntaxError.self) { try Endpoint.parse(text).get() }
    }
}
