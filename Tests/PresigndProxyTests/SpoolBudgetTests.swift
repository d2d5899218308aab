import Testing

@testable import PresigndProxy

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SpoolBudgetTests {
    @Test func reservationsFitTheLimitAndComeBackWhenReleased() {
        let budget = SpoolBudget(limit: 100)
        #expect(budget.reserve(60))
        #expect(!budget.reserve(41), "over the limit: nothing taken")
        #expect(budget.inUse == 60)
        #expect(budget.reserve(40))
        budget.release(60)
        #expect(budget.inUse == 40 && budget.reserve(60))
    }

    @Test func aLowerLimitAfterAReloadKeepsWhatIsHeldAndRefusesMore() {
        let budget = SpoolBudget(limit: 100)
        #expect(budget.reserve(80))
        budget.setLimit(50)
        #expect(!budget.reserve(1) && budget.inUse == 80)
    }

    @Test func aSpoolTakesItsDeclaredLengthUpFrontAndGivesItBackWhenItGoes() throws {
        let budget = SpoolBudget(limit: 3 << 20)
        var first: UploadSpool? = try UploadSpool(
            directory: "/tmp", limit: 5 << 20, budget: budget, declaredLength: 2 << 20)
        #expect(budget.inUse == 2 << 20)
        #expect(throws: UploadSpool.overBudget) {
            _ = try UploadSpool(directory: "/tmp", limit: 5 << 20, budget: budget, declaredLength: 2 << 20)
        }
        #expect(budget.inUse == 2 << 20, "a refused spool takes nothing")
        withExtendedLifetime(first) {}
        first = nil
        #expect(budget.inUse == 0)
        let second = try UploadSpool(directory: "/tmp", limit: 5 << 20, budget: budget, declaredLength: 2 << 20)
        #expect(budget.inUse == 2 << 20)
        withExtendedLifetime(second) {}
    }

    @Test func theAutomaticBudgetIsHalfTheFreeSpaceInWholeMebibytesAtMost64GiB() {
        let automatic = SpoolBudget.automaticLimit(directory: "/tmp")
        #expect(automatic > 0 && automatic <= SpoolBudget.automaticCap && automatic % (1 << 20) == 0)
        #expect(SpoolBudget.automaticLimit(directory: "/nonexistent/presignd") == 64 << 20)
    }
}
