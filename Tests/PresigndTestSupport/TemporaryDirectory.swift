import Foundation

/// A scratch directory, removed when the value is dropped at the end of a test.
public final class TemporaryDirectory {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "presignd-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes `contents` to `name` inside the directory and returns the full path.
    public func write(_ name: String, _ contents: String) throws -> String {
        let file = path + "/" + name
        try contents.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
