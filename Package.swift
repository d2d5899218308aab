// swift-tools-version:6.0
// presignd: a streaming AWS Signature V4 signing proxy for S3-compatible storage.
import PackageDescription

let package = Package(
    name: "presignd",
    products: [
        .executable(name: "presignd", targets: ["presignd"])
    ],
    targets: [
        // System libraries. libc headers come first in each shim (DESIGN §7).
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),

        // OpenSSL's Swift side: the one OpenSSLError, for the signer and the TLS code (PresigndIO).
        .target(name: "PresigndOpenSSL", dependencies: ["COpenSSL"]),

        // The one lock (Locked: a pthread mutex, which ThreadSanitizer models).
        .target(name: "PresigndSync"),

        // Pure cores.
        .target(name: "PresigndHTTP1"),
        .target(name: "PresigndSigV4", dependencies: ["PresigndHTTP1", "PresigndOpenSSL", "COpenSSL"]),
        // The access policy (issue 19): operation classifier, action sets, the engine. Pure.
        .target(name: "PresigndPolicy", dependencies: ["PresigndHTTP1"]),
        .target(name: "PresigndConfig", dependencies: ["PresigndHTTP1", "PresigndSigV4", "PresigndPolicy"]),
        // The read cache by slices (issue 23): identity and keys, cacheability, range math, single-flight, the
        // slice store on disk. Glibc for the store; no libevent (the connection hands its descriptors to libevent).
        .target(
            name: "PresigndCache", dependencies: ["PresigndHTTP1", "PresigndSigV4", "PresigndConfig", "PresigndSync"]),

        // I/O edge. PresigndIO is the only module that imports CLibevent (DESIGN §3).
        .target(name: "PresigndIO", dependencies: ["CLibevent", "COpenSSL", "PresigndOpenSSL"]),
        .target(
            name: "PresigndProxy",
            dependencies: [
                "PresigndSigV4", "PresigndHTTP1", "PresigndConfig", "PresigndPolicy", "PresigndIO", "PresigndOpenSSL",
                "COpenSSL", "PresigndCache", "PresigndSync",
            ]
        ),

        // Command line.
        .executableTarget(
            name: "presignd",
            dependencies: [
                "PresigndProxy", "PresigndSigV4", "PresigndConfig", "PresigndHTTP1", "PresigndPolicy", "PresigndCache",
            ]
        ),
        .executableTarget(
            name: "presignd-bench",
            dependencies: ["PresigndSigV4", "PresigndHTTP1"],
            path: "Sources/presignd-bench"
        ),

        // The HTTP/1 fuzz drivers (Tests/Fuzz/FUZZING.md): scripts/fuzz.sh compiles them into the libFuzzer
        // targets, the unit tests run them over seeds and mutations.
        .target(name: "PresigndFuzzDrivers", dependencies: ["PresigndHTTP1"], path: "Tests/Fuzz/Drivers"),
        // Helpers the test targets share: the HTTP/1 caller simulation and decode transcripts, a seeded generator,
        // scratch directories and checkout paths. Public API of the modules only (no @testable), so it builds in
        // release too.
        .target(name: "PresigndTestSupport", dependencies: ["PresigndHTTP1"], path: "Tests/PresigndTestSupport"),

        .testTarget(name: "PresigndOpenSSLTests", dependencies: ["PresigndOpenSSL", "COpenSSL"]),
        .testTarget(name: "PresigndSigV4Tests", dependencies: ["PresigndSigV4", "PresigndTestSupport"]),
        .testTarget(
            name: "PresigndHTTP1Tests", dependencies: ["PresigndHTTP1", "PresigndFuzzDrivers", "PresigndTestSupport"]),
        .testTarget(
            name: "PresigndPolicyTests", dependencies: ["PresigndPolicy", "PresigndHTTP1", "PresigndTestSupport"]),
        .testTarget(name: "PresigndConfigTests", dependencies: ["PresigndConfig", "PresigndTestSupport"]),
        .testTarget(
            name: "PresigndCacheTests",
            dependencies: ["PresigndCache", "PresigndConfig", "PresigndHTTP1", "PresigndSync", "PresigndTestSupport"]),
        // The measurements behind the cache's layout and eviction choices (docs/ARCHITECTURE.md, "Cache").
        .executableTarget(
            name: "presignd-cache-bench", dependencies: ["PresigndCache", "PresigndTestSupport"],
            path: "Tests/PresigndCacheBench"),
        // Writes slices until killed, for the cache's crash test (PresigndCacheTests.CrashRecoveryTests); seeds and
        // looks up objects for the cache's end-to-end tests and scripts/bench_cache.py.
        .executableTarget(
            name: "presignd-cache-probe", dependencies: ["PresigndCache", "PresigndConfig"],
            path: "Tests/PresigndCacheProbe"),
        .testTarget(name: "PresigndIOTests", dependencies: ["PresigndIO", "COpenSSL", "PresigndTestSupport"]),
        // Runs a listener at the file-descriptor ceiling in a process of its own (PresigndIOTests.ListenerTests).
        .executableTarget(name: "presignd-io-probe", dependencies: ["PresigndIO"], path: "Tests/PresigndIOProbe"),
        .testTarget(
            name: "PresigndProxyTests",
            dependencies: [
                "PresigndProxy", "PresigndConfig", "PresigndHTTP1", "PresigndCache", "PresigndSync", "PresigndTestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
