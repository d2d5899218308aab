import PresigndCache
import Testing

@testable import PresigndProxy

@Suite struct DescriptorBudgetTests {
    let budget = DescriptorBudget(workers: 2, listenersPerWorker: 1, idlePerUpstream: [128, 4], adminConnections: 32)

    @Test func countsThreeDescriptorsPerConnectionAndThePoolsNoLargerThanTheConnections() {
        // reserve 32 + admin (32 + socket + spare) + 2 × (4 + 2 × 1 listener + 3×10 + min(128,10) + min(4,10))
        #expect(budget.needed(connectionsPerWorker: 10) == 32 + 34 + 2 * (4 + 2 + 30 + 10 + 4))
    }

    @Test func eachCacheDirectoryAddsItsLockAndTheSliceDescriptorsItKeepsAndAConnectionItsQueuedSlices() {
        var cached = budget
        cached.cacheDirectories = 2
        // Each of the 2 × 10 connections may queue 16 slice files behind a cached head, beside its socket and an
        // upstream socket (a revalidation): 18 instead of 3.
        #expect(DescriptorBudget.perCachedConnection == 2 + CacheRead.maxSlicesPerAnswer)
        #expect(
            cached.needed(connectionsPerWorker: 10)
                == budget.needed(connectionsPerWorker: 10) + 2 * (1 + SliceStore.keptDescriptors)
                + 2 * 10 * (DescriptorBudget.perCachedConnection - DescriptorBudget.perConnection))
        #expect(cached.fittingConnections(limit: 1024) < budget.fittingConnections(limit: 1024))
    }

    @Test func picksTheMostConnectionsThatFit() {
        let fitting = budget.fittingConnections(limit: 1024)
        #expect(fitting > 0)
        #expect(budget.needed(connectionsPerWorker: fitting) <= 1024)
        #expect(budget.needed(connectionsPerWorker: fitting + 1) > 1024)
    }

    @Test func capsTheAutomaticFigureAndRefusesALimitTooLowForOneConnection() {
        #expect(budget.fittingConnections(limit: Int.max) == DescriptorBudget.automaticCap)
        #expect(budget.fittingConnections(limit: 64) == 0)
    }

    @Test func aConfiguredCountAboveTheLimitIsAWarningThatNamesTheFix() {
        let report = DescriptorReport(limit: 256, maxConnections: 1024, isAutomatic: false, needed: 3200, workers: 1)
        #expect(report.warning?.contains("LimitNOFILE=") == true)
        #expect(report.warning?.contains("--ulimit nofile=") == true)
        let automatic = DescriptorReport(limit: 256, maxConnections: 50, isAutomatic: true, needed: 250, workers: 1)
        #expect(automatic.warning == nil)
    }
}
