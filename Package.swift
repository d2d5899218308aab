// swift-tools-version:6.0
// presignd: a streaming AWS Signature V4 signing proxy for S3-compatible storage.
import PackageDescription

/// Release builds of the hot-path modules skip the runtime exclusivity checks (the compile-time ones
/// stay): about twenty dynamic access checks a proxied request, ~2% of its instructions. Debug builds,
/// which every test and sanitizer run uses, keep them. Cross-module optimization lets the proxy inline
/// and specialize the codec's and signer's small functions (~1% more).
let hotPath: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release))
]

let package = Package(
    name: "presignd",
    products: [
        .executable(name: "presignd", targets: ["presignd"])
    ],
    targets: [
        // System libraries. libc headers come first in each shim (DESIGN §7).
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent_openssl",
            providers: [.apt(["libevent-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),

        // Pure cores.
        .target(name: "PresigndSigV4", dependencies: ["COpenSSL"], swiftSettings: hotPath),
        .target(name: "PresigndHTTP1", swiftSettings: hotPath),
        .target(name: "PresigndConfig"),

        // I/O edge.
        .target(
            name: "PresigndProxy",
            dependencies: [
                "PresigndSigV4", "PresigndHTTP1", "PresigndConfig", "CLibevent", "COpenSSL",
            ],
            swiftSettings: hotPath
        ),

        // Command line.
        .executableTarget(
            name: "presignd",
            dependencies: ["PresigndProxy", "PresigndSigV4", "PresigndConfig", "PresigndHTTP1"]
        ),
        .executableTarget(
            name: "presignd-bench",
            dependencies: ["PresigndSigV4", "PresigndHTTP1"],
            path: "Sources/presignd-bench"
        ),

        .testTarget(name: "PresigndSigV4Tests", dependencies: ["PresigndSigV4"]),
        .testTarget(name: "PresigndHTTP1Tests", dependencies: ["PresigndHTTP1"]),
        .testTarget(name: "PresigndConfigTests", dependencies: ["PresigndConfig"]),
        .testTarget(
            name: "PresigndProxyTests",
            dependencies: ["PresigndProxy", "PresigndConfig", "PresigndHTTP1"]),
    ],
    swiftLanguageModes: [.v6]
)
