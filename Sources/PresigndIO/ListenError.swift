#if canImport(Glibc)
    import Glibc
#endif

/// Why a listening socket could not be made.
public enum ListenError: Error, Equatable, Sendable, CustomStringConvertible {
    case resolve(address: String, reason: String)
    case socket(address: String, call: String, errno: Int32)

    public var description: String {
        switch self {
        case .resolve(let address, let reason): "cannot resolve listen address \(address): \(reason)"
        case .socket(let address, let call, let code):
            "cannot listen on \(address): \(call): \(IOError.text(errno: code))"
        }
    }
}
