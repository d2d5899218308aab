// presignd-io-probe: runs a Listener at the file-descriptor ceiling in a process of its own (lowering
// RLIMIT_NOFILE in the test process would starve every test running next to it). ListenerTests drives it:
//
//   presignd-io-probe accept-at-fd-limit
//     prints "port N", takes every free descriptor, runs the loop for 1 s while the test's clients wait in the
//     backlog, prints "overload errors=E pauses=P accepted=A cpu_ms=C", frees the descriptors, runs 1.5 s more,
//     prints "recovered accepted=A", exits 0.
//
//   presignd-io-probe retry-now
//     the same with a 1 s first pause; 300 ms into it, frees the descriptors and calls `retryNow()` (as a worker
//     does when a connection closes), runs 200 ms more, prints "retried accepted=A resumes=R", exits 0.
import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

func say(_ line: String) {
    let text = line + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
}

func cpuMilliseconds() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Int(usage.ru_utime.tv_sec) * 1000 + Int(usage.ru_utime.tv_usec) / 1000
    let system = Int(usage.ru_stime.tv_sec) * 1000 + Int(usage.ru_stime.tv_usec) / 1000
    return user + system
}

func run() throws -> Int32 {
    let mode = CommandLine.arguments.dropFirst().first ?? ""
    guard mode == "accept-at-fd-limit" || mode == "retry-now" else {
        say("usage: presignd-io-probe accept-at-fd-limit | retry-now")
        return 64
    }
    let retriesNow = mode == "retry-now"
    var limit = rlimit(rlim_cur: 64, rlim_max: 4096)
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = 64
    guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
        say("setrlimit failed")
        return 71
    }
    let loop = try EventLoop(lockless: true)
    let socket = try ListenSocket.tcp(host: "127.0.0.1", port: 0)
    var errors = 0
    var accepted: [Int32] = []
    var resumes = 0
    let listener = try Listener(
        loop: loop, socket: socket, initialBackoffMilliseconds: retriesNow ? 1000 : 100,
        onAccept: { fd, _ in accepted.append(fd) }, onError: { _ in errors += 1 })
    listener.onResume = { resumes += 1 }
    say("port " + (socket.boundAddress.split(separator: ":").last.map(String.init) ?? "0"))
    var fillers: [Int32] = []
    while true {
        let fd = dup(0)
        if fd < 0 { break }
        fillers.append(fd)
    }
    let cpuBefore = cpuMilliseconds()
    let step = try LoopTimer(loop: loop) { loop.exit() }
    if retriesNow {
        try step.schedule(milliseconds: 300)
        try loop.run()
        for fd in fillers { close(fd) }
        listener.retryNow()
        try step.schedule(milliseconds: 200)
        try loop.run()
        say("retried accepted=\(accepted.count) resumes=\(resumes) errors=\(errors)")
        for fd in accepted { close(fd) }
        return 0
    }
    try step.schedule(milliseconds: 1000)
    try loop.run()
    say(
        "overload errors=\(errors) pauses=\(listener.pauseCount) accepted=\(accepted.count) "
            + "cpu_ms=\(cpuMilliseconds() - cpuBefore)")
    for fd in fillers { close(fd) }
    try step.schedule(milliseconds: 1500)
    try loop.run()
    say("recovered accepted=\(accepted.count)")
    for fd in accepted { close(fd) }
    return 0
}

do {
    exit(try run())
} catch {
    say("error \(error)")
    exit(71)
}
