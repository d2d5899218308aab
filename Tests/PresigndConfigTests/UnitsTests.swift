import PresigndConfig
import Testing

@Suite struct UnitsTests {
    @Test(arguments: [
        ("30s", 30_000), ("500ms", 500), ("5m", 300_000), ("1h30m", 5_400_000), ("7d", 604_800_000),
        ("1d2h3m4s5ms", 93_784_005), ("0s", 0),
    ])
    func parsesDurations(text: String, milliseconds: Int) {
        #expect(ConfigDuration(parsing: text)?.milliseconds == milliseconds)
    }

    @Test(arguments: ["", "30", "s", "1.5h", "30 s", "1m1h", "5w", "-1s", "1s1s", "99999999999999999d"])
    func rejectsMalformedDurations(text: String) {
        #expect(ConfigDuration(parsing: text) == nil)
    }

    @Test(arguments: [
        (ConfigDuration.milliseconds(5_400_000), "1h30m"), (.seconds(0), "0s"), (.milliseconds(1500), "1s500ms"),
    ])
    func describesDurationsInTheirShortestSpelling(duration: ConfigDuration, text: String) {
        #expect(duration.description == text)
        #expect(ConfigDuration(parsing: text) == duration)
    }

    @Test(arguments: [
        ("64KiB", 65_536), ("8 KiB", 8192), ("5GiB", 5 << 30), ("1TiB", 1 << 40), ("512B", 512), ("100", 100),
        ("1KB", 1000), ("2MB", 2_000_000), ("3GB", 3_000_000_000), ("1MiB", 1 << 20),
    ])
    func parsesSizes(text: String, bytes: Int) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "KiB", "1.5GiB", "10kib", "10 ", "-1B", "99999999999999999TiB"])
    func rejectsMalformedSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    @Test func readsDurationsAndSizesFromTheFileWithPositions() {
        let text = """
            [server]
            shutdown_timeout = "soon"
            max_spool_size = "lots"
            [server.limits]
            header_timeout = true
            max_header_bytes = "1B"
            """ + "\n" + minimalUpstream
        #expect(
            described(errors(text)) == [
                "2:20: 'shutdown_timeout': invalid duration 'soon'; use a number with a unit (ms, s, m, h, d), "
                    + "e.g. \"30s\" or \"1h30m\"",
                "3:18: 'max_spool_size': invalid size 'lots'; use a number with a unit (B, KiB, MiB, GiB, TiB, KB, MB, "
                    + "GB), e.g. \"64KiB\"",
                "5:18: 'header_timeout': expected a duration such as \"30s\", found a boolean",
                "6:20: 'max_header_bytes' must be from 256B to 16MiB",
            ])
    }
}

extension ConfigDuration {
    static func milliseconds(_ value: Int) -> ConfigDuration { ConfigDuration(milliseconds: value) }
}
