// presignd-bench: SigV4 microbenchmark (ns per header signature, with and without the cached signing key, and
// signed straight into an upstream head buffer as the proxy does).
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

/// This thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`): unaffected by other processes on a
/// busy machine, unlike the monotonic wall clock.
func threadCPUNanoseconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Int(spec.tv_sec) * 1_000_000_000 + Int(spec.tv_nsec)
}

/// Per-iteration cost: wall-clock and thread-CPU nanoseconds.
struct Measurement {
    var wall: Double
    var cpu: Double
    var sink: Int

    var text: String { "\(Int(wall)) ns/op wall, \(Int(cpu)) ns/op CPU" }
}

/// Runs `body` `iterations` times after a warm-up.
func measure(_ iterations: Int, _ body: () throws(SigV4Error) -> Int) throws(SigV4Error) -> Measurement {
    var sink = 0
    for _ in 0..<(iterations / 10) { sink &+= try body() }
    let start = monotonicNanoseconds()
    let cpuStart = threadCPUNanoseconds()
    for _ in 0..<iterations { sink &+= try body() }
    let cpu = threadCPUNanoseconds() - cpuStart
    let elapsed = monotonicNanoseconds() - start
    return Measurement(wall: Double(elapsed) / Double(iterations), cpu: Double(cpu) / Double(iterations), sink: sink)
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
    let cached = try measure(iterations) { () throws(SigV4Error) -> Int in
        let signed = try signer.sign(request, payload: .emptyBody, date: date)
        signedHeaders = signed.signedHeaders
        return signed.signature.utf8.count
    }
    var head: [UInt8] = []
    head.reserveCapacity(1024)
    let cachedHead = try measure(iterations) { () throws(SigV4Error) -> Int in
        head.removeAll(keepingCapacity: true)
        try signer.signHead(request, payload: .emptyBody, date: date, into: &head)
        return head.count
    }
    let uncachedSigner = try Signer(credentials: credentials, region: "auto", cachesSigningKey: false)
    let uncached = try measure(iterations) { () throws(SigV4Error) -> Int in
        try uncachedSigner.sign(request, payload: .emptyBody, date: date).signature.utf8.count
    }
    let presignIterations = max(1, iterations / 4)
    let presign = try measure(presignIterations) { () throws(SigV4Error) -> Int in
        try signer.presign(method: "GET", host: "h.example", path: "/b/k", expires: 3600, date: date).url.utf8.count
    }
    print("signed headers: \(signedHeaders) (\(signedHeaders.split(separator: ";").count))")
    print("header signature, cached key:   \(cached.text) (\(iterations) iterations)")
    print("header signature into a head buffer, cached key: \(cachedHead.text) (\(iterations) iterations)")
    print("header signature, no key cache: \(uncached.text) (\(iterations) iterations)")
    print("presigned URL, cached key:      \(presign.text) (\(presignIterations) iterations)")
    if cached.sink ^ cachedHead.sink ^ uncached.sink ^ presign.sink == 42 { print("") }
}

do {
    try run()
} catch {
    print("presignd-bench: \(error)")
    exit(1)
}
