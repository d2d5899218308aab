import Testing

@testable import PresigndProxy

@Suite struct BackpressureTests {
    let watermarks = Backpressure(low: 100, high: 400)

    @Test func aReadingSideGoesOnUntilTheOutputPassesTheHighWatermark() {
        #expect(watermarks.allowsReading(isReading: true, queued: 0))
        #expect(watermarks.allowsReading(isReading: true, queued: 400))
        #expect(!watermarks.allowsReading(isReading: true, queued: 401))
    }

    @Test func aPausedSideResumesOnlyOnceTheOutputDrainedToTheLowWatermark() {
        #expect(!watermarks.allowsReading(isReading: false, queued: 399))
        #expect(!watermarks.allowsReading(isReading: false, queued: 101))
        #expect(watermarks.allowsReading(isReading: false, queued: 100))
        #expect(watermarks.allowsReading(isReading: false, queued: 0))
    }
}
