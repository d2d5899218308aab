import Foundation
import PresigndTestSupport
import Testing

@testable import PresigndSigV4

/// Locates and reads the SigV4 vectors checked in at `Tests/Fixtures/sigv4-vectors` (aws-c-auth's and
/// botocore's copies of the AWS suite, Apache-2.0, and the S3 documentation examples; see its README).
/// The folder is found relative to this source file, so the suite reads nothing outside the checkout.
enum VectorFiles {
    struct NotFound: Error, CustomStringConvertible {
        var description: String
    }

    /// `<this file's folder>/../Fixtures/sigv4-vectors`; an error naming that path when it is missing.
    static func root(filePath: String = #filePath) throws -> URL {
        let candidate = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sigv4-vectors").standardizedFileURL
        guard FileManager.default.fileExists(atPath: candidate.appendingPathComponent("README.md").path) else {
            throw NotFound(description: "\(candidate.path) is missing: the vectors live in the repository")
        }
        return candidate
    }

    /// A file as UTF-8 with one trailing LF removed (vectors README "How a test should use them").
    static func text(_ relativePath: String) throws -> String {
        let data = try Data(contentsOf: try root().appendingPathComponent(relativePath))
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    static func json(_ relativePath: String) throws -> [String: Any] {
        let data = try Data(contentsOf: try root().appendingPathComponent(relativePath))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw NotFound(description: "\(relativePath) is not a JSON object")
        }
        return object
    }
}

/// An unsigned request from `request.txt` / `.req`.
struct VectorRequest {
    var method: String
    var rawPath: String
    var rawQuery: String
    var headers: [(name: String, value: String)]
    var body: String

    /// Method, target up to the last ` HTTP/1.1`, `Name:value` headers, obs-fold joined with one space,
    /// a blank line, then the body.
    init(_ text: String) throws {
        var lines = text.components(separatedBy: "\n")
        let requestLine = lines.removeFirst()
        guard let space = requestLine.firstIndex(of: " "),
            let version = requestLine.range(of: " HTTP/1.1", options: .backwards)
        else { throw VectorFiles.NotFound(description: "bad request line \(requestLine)") }
        method = String(requestLine[..<space])
        let target = String(requestLine[requestLine.index(after: space)..<version.lowerBound])
        if let question = target.firstIndex(of: "?") {
            rawPath = String(target[..<question])
            rawQuery = String(target[target.index(after: question)...])
        } else {
            rawPath = target
            rawQuery = ""
        }
        headers = []
        body = ""
        while !lines.isEmpty {
            let line = lines.removeFirst()
            if line.isEmpty {
                body = lines.joined(separator: "\n")
                break
            }
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].value += " " + line
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
    }

    var host: String { headers.first { $0.name.lowercased() == "host" }?.value ?? "" }

    func signable() throws -> SignableRequest {
        SignableRequest(
            method: method, path: try URIEncoding.canonicalPath(rawPath: Array(rawPath.utf8)),
            query: try URIEncoding.parseQuery(rawQuery: Array(rawQuery.utf8)), headers: headers)
    }
}

extension String {
    /// The value of the `Authorization:` line of a signed-request file.
    func authorizationLine() -> String? {
        for line in components(separatedBy: "\n") where line.hasPrefix("Authorization:") {
            return String(line.dropFirst("Authorization:".count))
        }
        return nil
    }
}
