// presignd-bench: SigV4 microbenchmark (ns per header signature, with and without the cached signing key).
#if canImport(Glibc)
    import Glibc
#endif
import PresigndSigV4

/// Monotonic nanoseconds from `clock_gettime(CLOCK_MONOTONIC)`.
func monotonicNanoseconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int(spec.tv_sec) * 1_000_000_000 + Int(spec.tv_nsec)
}

/// Runs `body` `iterations` times after a warm-up and returns ns per iteration.
func measure(_ iterations: Int, _ body: () throws(SigV4Error) -> Int) throws(SigV4Error) -> (Double, Int) {
    var sink = 0
    for _ in 0..<(iterations / 10) { sink &+= try body() }
    let start = monotonicNanoseconds()
    for _ in 0..<iterations { sink &+= try body() }
    let elapsed = monotonicNanoseconds() - start
    return (Double(elapsed) / Double(iterations), sink)
}

func run() throws(SigV4Error) {
    let arguments = CommandLine.arguments
    let iterations = arguments.count > 1 ? Int(arguments[1]) ?? 200_000 : 200_000
    let credentials = Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: Secret("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"))
    let signer = try Signer(credentials: credentials, region: "auto")
    let date = AmzDate(epochSeconds: 1_772_323_200)
    // A typical proxied GET: host, range, if-none-match + the signer's date and content-sha256
    // (6 signed headers), plus two unsigned ones.
    let request = SignableRequest(
        method: "GET", path: "/photos/2026/03/cat%20picture.jpg",
        query: [QueryParameter(name: "versionId", value: "3HL4kqtJlcpXroDTDmJ")],
        headers: [
            ("Host", "0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com"), ("User-Agent", "curl/8.5.0"),
            ("Accept", "*/*"), ("Range", "bytes=0-1048575"), ("If-None-Match", "\"9b2cf535f27731c974343645a3985328\""),
            ("Content-Type", "image/jpeg"),
        ])
    var signedHeaders = ""
    let (cached, sinkA) = try measure(iterations) { () throws(SigV4Error) -> Int in
        let signed = try signer.sign(request, payload: .emptyBody, date: date)
        signedHeaders = signed.signedHeaders
        return signed.signature.utf8.count
    }
    let uncachedSigner = try Signer(credentials: credentials, region: "auto")
    uncachedSigner.cachesSigningKey = false
    let (uncached, sinkB) = try measure(iterations) { () throws(SigV4Error) -> Int in
        try uncachedSigner.sign(request, payload: .emptyBody, date: date).signature.utf8.count
    }
    let presignIterations = max(1, iterations / 4)
    let (presign, sinkC) = try measure(presignIterations) { () throws(SigV4Error) -> Int in
        try signer.presign(method: "GET", host: "h.example", path: "/b/k", expires: 3600, date: date).url.utf8.count
    }
    print("signed headers: \(signedHeaders) (\(signedHeaders.split(separator: ";").count))")
    print("header signature, cached key:   \(Int(cached)) ns/op (\(iterations) iterations)")
    print("header signature, no key cache: \(Int(uncached)) ns/op (\(iterations) iterations)")
    print("presigned URL, cached key:      \(Int(presign)) ns/op (\(presignIterations) iterations)")
    if sinkA ^ sinkB ^ sinkC == 42 { print("") }
}

do {
    try run()
} catch {
    print("presignd-bench: \(error)")
    exit(1)
}
