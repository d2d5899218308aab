#if canImport(Glibc)
    import Glibc
#endif

/// Why a libevent, OpenSSL or system call made by PresigndIO failed. Every C call's result is checked and ends up
/// here (or, for a stream, in `StreamEnd.failed`).
public enum IOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The named call could not allocate (libevent reports most allocation failures only as NULL or -1).
    case outOfMemory(String)
    /// A system call failed with `errno`.
    case system(call: String, errno: Int32)
    /// libevent refused a call for a reason it does not report (e.g. `event_add`, `event_base_dispatch`).
    case eventLoop(String)
    /// OpenSSL failed; the text holds its drained error queue.
    case tls(String)

    public var description: String {
        switch self {
        case .outOfMemory(let call): "\(call): out of memory"
        case .system(let call, let code): "\(call): \(IOError.text(errno: code))"
        case .eventLoop(let reason): "event loop: \(reason)"
        case .tls(let reason): "TLS: \(reason)"
        }
    }

    /// `strerror` for an `errno` value.
    public static func text(errno code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// `.system` with the current `errno`.
    static func lastSystemError(_ call: String) -> IOError {
        .system(call: call, errno: errno)
    }
}
