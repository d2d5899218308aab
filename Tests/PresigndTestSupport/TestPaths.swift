import Foundation

/// Where the tests find files of the checkout and of the folder beside it, from the test's own source path.
public enum TestPaths {
    /// The nearest directory above `filePath` that holds `relativePath` (a file or a folder), or nil.
    public static func ancestor(of filePath: String, holding relativePath: String) -> String? {
        var directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent(relativePath).path) {
                return directory.path
            }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// The repository root: the nearest directory above the calling test's file that holds `Package.swift`.
    public static func repositoryRoot(filePath: String = #filePath) -> String? {
        ancestor(of: filePath, holding: "Package.swift")
    }
}
