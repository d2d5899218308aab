import PresigndHTTP1

/// An entry's `meta` file: the full identity (compared on every lookup), the stored answer, the slice size the
/// entry was cut with, and when it was stored and last validated. Replaced whole (write, sync, rename).
struct ObjectMeta: Sendable, Equatable {
    var identity: ObjectIdentity
    var stored: StoredResponse
    var sliceSize: Int
    var storedAt: Int
    var validatedAt: Int

    var layout: SliceLayout { SliceLayout(objectSize: stored.objectSize, sliceSize: sliceSize) }

    static let magic = "presignd-cache-meta 1"

    /// Every field length-prefixed (`LEN:BYTES\n`), so keys and header values need no escaping; `end` last, so a
    /// file cut short is never read as whole.
    var encoded: [UInt8] {
        var fields = [
            identity.name.upstream, identity.name.bucket, identity.name.key, identity.version.etag,
            identity.version.versionID == nil ? "0" : "1", identity.version.versionID ?? "",
            String(stored.objectSize), String(sliceSize), String(storedAt), String(validatedAt),
            String(stored.headers.count),
        ]
        for (name, value) in stored.headers { fields += [name, value] }
        fields.append("end")
        var bytes = Array((Self.magic + "\n").utf8)
        for field in fields {
            bytes += String(field.utf8.count).utf8
            bytes.append(UInt8(ascii: ":"))
            bytes += field.utf8
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// Nil for anything that is not a whole, well-formed meta file.
    init?(decoding bytes: [UInt8]) {
        let magic = Array((Self.magic + "\n").utf8)
        guard bytes.starts(with: magic) else { return nil }
        var reader = FieldReader(bytes: bytes, index: magic.count)
        guard let upstream = reader.next(), let bucket = reader.next(), let key = reader.next(),
            let etag = reader.next(), let hasVersion = reader.next(), let versionID = reader.next(),
            let objectSize = reader.nextInt(), let sliceSize = reader.nextInt(), sliceSize > 0,
            let storedAt = reader.nextInt(), let validatedAt = reader.nextInt(), let count = reader.nextInt(),
            count <= 1000
        else { return nil }
        var headers = HTTPHeaders()
        for _ in 0..<count {
            guard let name = reader.next(), let value = reader.next() else { return nil }
            headers.add(name: name, value: value)
        }
        guard reader.next() == "end", reader.index == bytes.count else { return nil }
        let version = ObjectVersion(etag: etag, versionID: hasVersion == "1" ? versionID : nil)
        identity = ObjectIdentity(name: ObjectName(upstream: upstream, bucket: bucket, key: key), version: version)
        stored = StoredResponse(objectSize: objectSize, headers: headers)
        self.sliceSize = sliceSize
        self.storedAt = storedAt
        self.validatedAt = validatedAt
    }

    init(identity: ObjectIdentity, stored: StoredResponse, sliceSize: Int, storedAt: Int, validatedAt: Int) {
        self.identity = identity
        self.stored = stored
        self.sliceSize = sliceSize
        self.storedAt = storedAt
        self.validatedAt = validatedAt
    }

    private struct FieldReader {
        let bytes: [UInt8]
        var index: Int

        mutating func next() -> String? {
            var length = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                guard (48...57).contains(bytes[index]), length < 1 << 20 else { return nil }
                length = length * 10 + Int(bytes[index] - 48)
                index += 1
            }
            guard index < bytes.count, length <= bytes.count - index - 2 else { return nil }
            let start = index + 1
            guard bytes[start + length] == UInt8(ascii: "\n") else { return nil }
            index = start + length + 1
            return String(decoding: bytes[start..<start + length], as: UTF8.self)
        }

        mutating func nextInt() -> Int? {
            guard let text = next(), !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ (48...57).contains($0) })
            else { return nil }
            return Int(text)
        }
    }
}
