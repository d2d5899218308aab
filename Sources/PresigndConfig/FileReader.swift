#if canImport(Glibc)
    import Glibc
#endif

/// Small-file reading with `open`/`read` (no Foundation), for the configuration and credential files.
public enum FileReader {
    /// The file's contents as UTF-8 text, or the `strerror` text on failure. Files larger than `limit` are refused.
    public static func read(_ path: String, limit: Int = 16 * ByteSize.mebibyte) -> Result<String, FileReadError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(FileReadError(errno: errno)) }
        defer { close(descriptor) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(FileReadError(errno: errno))
            }
            if count == 0 { break }
            contents += buffer[0..<count]
            guard contents.count <= limit else {
                return .failure(FileReadError(reason: "file is larger than \(ByteSize.format(limit))"))
            }
        }
        return .success(String(decoding: contents, as: UTF8.self))
    }

    /// A token file (EKS Pod Identity's authorization token, IRSA's web identity token): read afresh by each
    /// fetch, without the spaces and line ends around it. 64 KiB at most.
    public static func readToken(_ path: String) -> Result<String, FileReadError> {
        read(path, limit: 64 * 1024).map { text in
            var token = Substring(text)
            while let first = token.first, first.isWhitespace { token = token.dropFirst() }
            while let last = token.last, last.isWhitespace { token = token.dropLast() }
            return String(token)
        }
    }

    /// Nil if the process can read `path`, else why not.
    static func readabilityProblem(_ path: String) -> FileReadError? {
        access(path, R_OK) == 0 ? nil : FileReadError(errno: errno)
    }

    /// A path from the configuration: absolute as written, relative to the configuration file's directory.
    static func resolve(_ path: String, relativeTo configPath: String) -> String {
        guard !path.hasPrefix("/"), let slash = configPath.lastIndex(of: "/") else { return path }
        return String(configPath[...slash]) + path
    }
}

/// Why a file could not be read, as `strerror` says it.
public struct FileReadError: Error {
    public var reason: String
    /// The `errno` behind `reason`; 0 when it is presignd's own (a size limit).
    public var code: Int32 = 0

    init(reason: String) {
        self.reason = reason
    }

    init(errno code: Int32) {
        reason = String(cString: strerror(code))
        self.code = code
    }
}
