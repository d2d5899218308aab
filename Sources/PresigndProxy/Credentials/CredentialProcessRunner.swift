import PresigndConfig
import PresigndIO

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a `credential_process` once, blocking the calling (background) thread: `posix_spawn` without a shell,
/// stdin from `/dev/null`, stdout and stderr read through pipes until exit or the timeout (then SIGKILL).
enum CredentialProcessRunner {
    /// What one run produced. `stderr` is for the log; stdout never leaves `ProcessCredentials.parse`.
    struct Outcome: Sendable {
        var result: Result<FetchedCredentials, CredentialFetchError>
        var stderr: String
    }

    /// Most stdout kept (credentials are a few KiB) and most stderr logged.
    static let stdoutLimit = 64 * 1024
    static let stderrLimit = 4 * 1024

    static func run(_ config: CredentialProcessConfig) -> Outcome {
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard makePipe(&stdoutPipe) else { return failure("pipe: \(errorText(errno))") }
        guard makePipe(&stderrPipe) else {
            close(stdoutPipe[0])
            close(stdoutPipe[1])
            return failure("pipe: \(errorText(errno))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        // The daemon ignores SIGPIPE, and an ignored signal stays ignored across exec: give the child the
        // default disposition and an empty signal mask, as a shell would.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = config.arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, config.arguments[0], &actions, &attributes, argv, environ)
        close(stdoutPipe[1])
        close(stderrPipe[1])
        defer {
            close(stdoutPipe[0])
            close(stderrPipe[0])
        }
        guard status == 0 else { return failure("cannot start \(config.arguments[0]): \(errorText(status))") }

        var output: [UInt8] = []
        var errors: [UInt8] = []
        let deadline = MonotonicClock.microseconds() / 1000 + config.timeout.milliseconds
        var open = [stdoutPipe[0], stderrPipe[0]]
        var timedOut = false
        while !open.isEmpty {
            let left = deadline - MonotonicClock.microseconds() / 1000
            if left <= 0 {
                timedOut = true
                break
            }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(left, 1_000)))
            if ready < 0 && errno != EINTR { break }
            for entry in fds where entry.revents != 0 {
                let more =
                    entry.fd == stdoutPipe[0]
                    ? readSome(entry.fd, into: &output, limit: stdoutLimit)
                    : readSome(entry.fd, into: &errors, limit: stderrLimit)
                if !more { open.removeAll { $0 == entry.fd } }
            }
        }
        if timedOut { kill(pid, SIGKILL) }
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0 && errno == EINTR {}
        let stderrText = String(decoding: errors, as: UTF8.self)
        if timedOut {
            return Outcome(
                result: .failure(CredentialFetchError("credential_process timed out after \(config.timeout)")),
                stderr: stderrText)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out (the C macros are not imported).
        let signal = exitStatus & 0x7F
        if signal != 0 {
            return Outcome(
                result: .failure(CredentialFetchError("credential_process was killed by signal \(signal)")),
                stderr: stderrText)
        }
        let code = (exitStatus >> 8) & 0xFF
        if code != 0 {
            return Outcome(
                result: .failure(CredentialFetchError("credential_process exited with status \(code)")),
                stderr: stderrText)
        }
        let parsed = ProcessCredentials.parse(output).mapError {
            CredentialFetchError("credential_process: \($0.message)")
        }
        return Outcome(result: parsed, stderr: stderrText)
    }

    /// A pipe whose ends close on exec (glibc's `pipe2` is not imported without `_GNU_SOURCE`); the spawned
    /// process gets its ends through `dup2`, which clears the flag on the copy.
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Appends what is readable (up to `limit` in all); false at end of file or on an error.
    private static func readSome(_ fd: Int32, into buffer: inout [UInt8], limit: Int) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 { return errno == EINTR || errno == EAGAIN }
        if count == 0 { return false }
        let room = max(0, limit - buffer.count)
        buffer.append(contentsOf: chunk[0..<min(count, room)])
        return true
    }

    private static func failure(_ message: String) -> Outcome {
        Outcome(result: .failure(CredentialFetchError(message)), stderr: "")
    }

    private static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }
}
