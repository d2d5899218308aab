import PresigndCache
import PresigndHTTP1
import PresigndTestSupport
import Testing

@testable import PresigndProxy

@Suite struct CacheInvalidationTests {
    static let upstream = "r2 https://acct.r2.cloudflarestorage.com"

    static func name(_ key: String, bucket: String = "photos") -> ObjectName {
        ObjectName(upstream: upstream, bucket: bucket, key: key)
    }

    @Test(arguments: ["s3:GetObject", "s3:GetObjectVersion", "s3:ListBucket", "s3:GetObjectTagging", "s3:GetBucketAcl"])
    func readsInvalidateNothing(action: String) {
        #expect(CacheInvalidation.of(action: action, upstream: Self.upstream, bucket: "photos", key: "a") == nil)
    }

    @Test(arguments: [
        "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:PutObjectTagging", "s3:RestoreObject",
        "s3:PutObjectRetention", "s3:SomeFutureWrite",
    ])
    func writesToAKeyInvalidateThatObject(action: String) {
        #expect(
            CacheInvalidation.of(action: action, upstream: Self.upstream, bucket: "photos", key: "a/b")
                == .object(Self.name("a/b")))
    }

    @Test func writesWithoutAKeyInvalidateTheBucket() {
        // DeleteObjects (its keys are in the body, read after routing), DeleteBucket, bucket settings.
        for action in ["s3:DeleteObject", "s3:DeleteBucket", "s3:PutBucketCORS"] {
            #expect(
                CacheInvalidation.of(action: action, upstream: Self.upstream, bucket: "photos", key: "")
                    == .bucket(upstream: Self.upstream, bucket: "photos"))
        }
    }

    static func settings(caches: CacheStoreMap) -> ProxySettings {
        var target = RequestRewriterTests.settings().upstreams[0]
        target.objectNamespace = upstream
        let route = BucketRoute(name: "photos", upstreamIndex: 0, mount: Array("/photos".utf8), isReadOnly: false)
        return ProxySettings(upstreams: [target], routes: [route], limits: ClientLimits(), caches: caches)
    }

    @Test func theRewriterNamesWhatAnAllowedWriteInvalidatesOnlyWhenACacheIsOpen() throws {
        let scratch = try TemporaryDirectory()
        let store = try SliceStore(directory: scratch.path + "/cache", maxSize: 1 << 20)
        let settings = Self.settings(caches: CacheStoreMap(stores: [store.directory: store]))
        let put = RequestRewriterTests.head("PUT", "/photos/dir/cat%20one.jpg")
        let planned = try #require(RequestRewriterTests.plan(put, framing: .contentLength(3), settings: settings))
        #expect(planned.cacheInvalidation == .object(Self.name("dir/cat one.jpg")))  // the decoded key
        let get = try #require(
            RequestRewriterTests.plan(RequestRewriterTests.head("GET", "/photos/a"), settings: settings))
        #expect(get.cacheInvalidation == nil)
        let deleteObjects = RequestRewriterTests.head("POST", "/photos?delete", [("Content-MD5", "x")])
        let bulk = try #require(
            RequestRewriterTests.plan(deleteObjects, framing: .contentLength(10), settings: settings))
        #expect(bulk.cacheInvalidation == .bucket(upstream: Self.upstream, bucket: "photos"))
        let uncached = try #require(
            RequestRewriterTests.plan(put, framing: .contentLength(3), settings: Self.settings(caches: CacheStoreMap()))
        )
        #expect(uncached.cacheInvalidation == nil)
    }

    @Test func applyingDropsTheObjectOrTheBucketFromEveryOpenStoreAndNothingElse() throws {
        let scratch = try TemporaryDirectory()
        let first = try SliceStore(directory: scratch.path + "/one", maxSize: 1 << 20)
        let second = try SliceStore(directory: scratch.path + "/two", maxSize: 1 << 20)
        let caches = CacheStoreMap(stores: [first.directory: first, second.directory: second])
        for store in [first, second] {
            for name in [Self.name("a"), Self.name("b"), Self.name("a", bucket: "videos")] {
                let stored = StoredResponse(objectSize: 10, headers: ["ETag": "\"1\""])
                try store.store(
                    ObjectIdentity(name: name, version: ObjectVersion(etag: "\"1\"")), stored: stored,
                    sliceSize: 1 << 16, now: 0)
            }
        }
        #expect(CacheInvalidation.object(Self.name("a")).apply(to: caches).isEmpty)
        for store in [first, second] {
            #expect(try store.lookup(Self.name("a")) == nil)
            #expect(try store.lookup(Self.name("b")) != nil)
            #expect(try store.lookup(Self.name("a", bucket: "videos")) != nil)
        }
        #expect(CacheInvalidation.bucket(upstream: Self.upstream, bucket: "photos").apply(to: caches).isEmpty)
        for store in [first, second] {
            #expect(try store.lookup(Self.name("b")) == nil)
            #expect(try store.lookup(Self.name("a", bucket: "videos")) != nil)
        }
    }
}
