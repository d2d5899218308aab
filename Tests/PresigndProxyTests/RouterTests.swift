import Testing

@testable import PresigndProxy

@Suite struct RouterTests {
    static func route(_ name: String, mount: String, readOnly: Bool = false) -> BucketRoute {
        BucketRoute(name: name, upstreamIndex: 0, mount: Array(mount.utf8), isReadOnly: readOnly)
    }

    let router = Router(routes: [route("photos", mount: "/photos"), route("media", mount: "/m")])

    @Test(arguments: [
        ("/photos/cat.jpg", "/photos/cat.jpg", "cat.jpg"),
        ("/photos", "/photos", ""),
        ("/photos/", "/photos/", ""),
        ("/photos//a//b/", "/photos//a//b/", "/a//b/"),
        ("/m/x y", "/media/x y", "x y"),
    ])
    func routesPathStyleMounts(path: String, upstreamPath: String, key: String) {
        guard case .bucket(_, let sent, let objectKey) = router.route(decodedPath: Array(path.utf8)) else {
            Issue.record("no route for \(path)")
            return
        }
        #expect(String(decoding: sent, as: UTF8.self) == upstreamPath)
        #expect(String(decoding: objectKey, as: UTF8.self) == key)
    }

    @Test func mountPrefixMustEndAtASegmentBoundary() {
        #expect(router.route(decodedPath: Array("/photosx/a".utf8)) == .noSuchBucket("photosx"))
    }

    @Test func rootWithoutARootMountIsTheServiceLevel() {
        #expect(router.route(decodedPath: Array("/".utf8)) == .serviceRoot)
    }

    @Test func fixedBucketAtRootCatchesWhatLongerMountsDoNot() {
        let router = Router(routes: [Self.route("site", mount: "/"), Self.route("photos", mount: "/photos")])
        guard case .bucket(let index, let sent, _) = router.route(decodedPath: Array("/movie.mp4".utf8)) else {
            Issue.record("no route")
            return
        }
        #expect(index == 0)
        #expect(String(decoding: sent, as: UTF8.self) == "/site/movie.mp4")
        guard case .bucket(let other, _, _) = router.route(decodedPath: Array("/photos/a".utf8)) else {
            Issue.record("no route")
            return
        }
        #expect(other == 1)
    }
}
