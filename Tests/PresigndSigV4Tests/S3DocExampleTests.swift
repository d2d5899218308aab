import Foundation
import Testing

@testable import PresigndSigV4

/// `s3-doc-examples/cases.json`: the S3 API Reference examples, signed with the S3 header policy.
@Suite struct S3DocExampleTests {
    struct Example {
        var json: [String: Any]
        var signer: Signer
        var date: AmzDate
        var method: String
        var host: String
        var path: String
        var query: [QueryParameter]
        var headers: [(name: String, value: String)]

        init(_ name: String) throws {
            let file = try VectorFiles.json("s3-doc-examples/cases.json")
            let cases = try #require(file["cases"] as? [[String: Any]])
            json = try #require(cases.first { $0["name"] as? String == name })
            let credentials = try #require(file["credentials"] as? [String: String])
            signer = try Signer(
                credentials: Credentials(
                    accessKeyID: try #require(credentials["access_key_id"]),
                    secretAccessKey: Secret(try #require(credentials["secret_access_key"]))),
                region: try #require(file["region"] as? String), service: try #require(file["service"] as? String))
            let timestamp = try #require(file["timestamp"] as? String)
            date = try #require(AmzDate(parsing: timestamp))
            method = try #require(json["method"] as? String)
            let url = try #require(json["url"] as? String).dropFirst("https://".count)
            let slash = try #require(url.firstIndex(of: "/"))
            host = String(url[..<slash])
            let target = url[slash...]
            let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            let rawPath = parts[0]
            let rawQuery = parts.count > 1 ? parts[1] : ""
            path = try URIEncoding.canonicalPath(rawPath: Array(rawPath.utf8))
            query = try URIEncoding.parseQuery(rawQuery: Array(rawQuery.utf8))
            let pairs = try #require(json["headers"] as? [[String]])
            headers = [("Host", host)] + pairs.map { ($0[0], $0[1]) }
        }

        var payload: PayloadHash {
            get throws {
                let value = try #require(json["payload"] as? String)
                return try #require(PayloadHash(clientValue: value))
            }
        }

        func headerSigned() throws -> SignedRequest {
            try signer.sign(SignableRequest(method: method, path: path, query: query, headers: headers), payload: try payload, date: date)
        }
    }

    @Test(arguments: ["get-object-range", "put-object-dollar-key", "get-bucket-lifecycle-valueless-query", "list-objects-sorted-query"])
    func headerExampleMatches(name: String) throws {
        let example = try Example(name)
        let signed = try example.headerSigned()
        let lines = signed.canonicalRequest.components(separatedBy: "\n")
        if let uri = example.json["expected_canonical_uri"] as? String { #expect(lines[1] == uri) }
        if let query = example.json["expected_canonical_query"] as? String { #expect(lines[2] == query) }
        #expect(signed.signedHeaders == example.json["expected_signed_headers"] as? String)
        #expect(signed.signature == example.json["expected_signature"] as? String)
        #expect(lines.last == (try example.payload).value)
        #expect(signed.headers.contains { $0.name == "X-Amz-Content-SHA256" && $0.value == lines.last })
        #expect(signed.authorization.hasSuffix("Signature=\(signed.signature)"))
    }

    @Test func presignedGetMatches() throws {
        let example = try Example("presigned-get-object")
        let presigned = try example.signer.presign(
            method: example.method, host: example.host, path: example.path, expires: 86_400, date: example.date)
        #expect(presigned.signature == example.json["expected_signature"] as? String)
        #expect(presigned.canonicalRequest.hasSuffix("\nhost\nUNSIGNED-PAYLOAD"))
        #expect(presigned.url.hasPrefix("https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&"))
        #expect(presigned.url.hasSuffix("&X-Amz-Signature=\(presigned.signature)"))
        #expect(presigned.expiresAt == example.date.epochSeconds + 86_400)
        #expect(presigned.signedHeaders.isEmpty)
    }

    @Test func awsChunkedSeedChunkAndTrailerSignatures() throws {
        let example = try Example("put-object-aws-chunked")
        let seed = try example.headerSigned()
        #expect(seed.signedHeaders == example.json["expected_signed_headers"] as? String)
        #expect(seed.signature == example.json["expected_seed_signature"] as? String)
        let expectedChunks = try #require(example.json["expected_chunk_signatures"] as? [String])
        var previous = seed.signature
        for (index, size) in [65_536, 1_024, 0].enumerated() {
            let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: size)
            previous = try chunk.withUnsafeBytes { try example.signer.chunkSignature(previousSignature: previous, chunk: $0, date: example.date) }
            #expect(previous == expectedChunks[index], "chunk \(index)")
        }
        // The same chunk via its precomputed hash.
        let hashed = try example.signer.chunkSignature(
            previousSignature: expectedChunks[1], chunkSHA256Hex: PayloadHash.emptySHA256, date: example.date)
        #expect(hashed == expectedChunks[2])
        let trailer = AWSChunked.canonicalTrailer([("first", "1st"), ("second", "2nd"), ("third", "3rd")])
        #expect(trailer == "first:1st\nsecond:2nd\nthird:3rd\n")
        let trailerSignature = try example.signer.trailerSignature(previousSignature: previous, trailerLines: trailer, date: example.date)
        #expect(trailerSignature == example.json["expected_trailer_signature"] as? String)
        #expect(AWSChunked.encodedLength(decodedLength: 66_560, chunkSize: 65_536) == example.json["expected_encoded_length"] as? Int)
        #expect(AWSChunked.encodedLength(decodedLength: 66_560, chunkSize: 65_536) == 66_824)
    }
}
