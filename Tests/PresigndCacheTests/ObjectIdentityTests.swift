import PresigndCache
import Testing

/// Cache keys (issue 23 §2, §6): one per upstream, bucket and key, never shared across buckets.
@Suite struct ObjectIdentityTests {
    @Test func keysDifferByUpstreamBucketAndKey() throws {
        let keys = try [
            objectName("a"), objectName("a", bucket: "c"), objectName("a", upstream: "v"), objectName("b"),
        ].map(CacheKey.init)
        #expect(Set(keys).count == 4)
        #expect(try CacheKey(objectName("a")) == keys[0])
    }

    @Test func fieldBoundariesCannotBeShiftedToForgeAnotherBucketsKey() throws {
        // Without length prefixes "b" + "x/y" and "b/x" + "y" would encode alike.
        let one = try CacheKey(ObjectName(upstream: "u", bucket: "b", key: "x/y"))
        let two = try CacheKey(ObjectName(upstream: "u", bucket: "b/x", key: "y"))
        let three = try CacheKey(ObjectName(upstream: "u:b", bucket: "", key: "x/y"))
        #expect(Set([one, two, three]).count == 3)
    }

    @Test func theKeyOfANameStaysWhatStoresOnDiskWereWrittenWith() throws {
        // SHA-256 of "23:https://up.example:443/" + "6:photos" + "7:cat.jpg": a change of the encoding would orphan
        // every stored entry (their directories are named by it).
        let key = try CacheKey(ObjectName(upstream: "https://up.example:443/", bucket: "photos", key: "cat.jpg"))
        #expect(key.hex == "760ca6303456ebb6be9d8dc461f646dc8cc1c48b4cd451a545396a77dccff96f")
    }

    @Test func keyIsSixtyFourLowerHexDigits() throws {
        let key = try CacheKey(objectName("photos/cat.jpg"))
        #expect(key.hex.count == 64 && key.hex.allSatisfy { "0123456789abcdef".contains($0) })
    }
}
