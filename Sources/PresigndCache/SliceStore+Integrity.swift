/// The integrity check on open: what a crash or a foreign hand left is removed, only whole slices of the
/// version their `meta` names are kept.
extension SliceStore {
    /// Reads every entry under `root` (`objects/`). Removed: temporary files (partial writes), entries whose
    /// `meta` is missing, unreadable or hashes to another directory, slice files of another version, outside the
    /// object, or not exactly the slice's length, and anything else that is not the store's.
    static func scan(_ root: String) throws(CacheError) -> ([CacheKey: Entry], IntegrityReport) {
        var entries: [CacheKey: Entry] = [:]
        var report = IntegrityReport()
        for shard in try FileSystem.entries(root) {
            let shardPath = root + "/" + shard
            guard try FileSystem.fileType(shardPath) == .directory else {
                try FileSystem.unlink(shardPath)
                report.droppedFiles += 1
                continue
            }
            for name in try FileSystem.entries(shardPath) {
                let path = shardPath + "/" + name
                if try FileSystem.fileType(path) != .directory {
                    try FileSystem.unlink(path)
                    report.droppedFiles += 1
                } else if let key = CacheKey(hex: name), key.shard == shard,
                    let entry = try checkEntry(key, path: path, report: &report)
                {
                    entries[key] = entry
                } else {
                    try removeTree(path)
                    report.droppedObjects += 1
                }
            }
            try FileSystem.removeDirectory(shardPath)  // only when empty
        }
        return (entries, report)
    }

    /// One object directory: its entry, or nil when it must go whole.
    private static func checkEntry(_ key: CacheKey, path: String, report: inout IntegrityReport)
        throws(CacheError) -> Entry?
    {
        let files = try FileSystem.entries(path)
        guard files.contains("meta"), case .regular = try FileSystem.fileType(path + "/meta"),
            let bytes = try FileSystem.readSmallFile(path + "/meta"),
            let meta = ObjectMeta(decoding: bytes), try Self.key(meta.identity.name) == key
        else { return nil }
        let tag = try versionTag(meta.identity.version)
        let layout = meta.layout
        var present: Set<Int> = []
        for file in files where file != "meta" {
            let filePath = path + "/" + file
            let type = try FileSystem.fileType(filePath)
            if let index = sliceIndex(file, tag: tag), index < layout.sliceCount,
                type == .regular(size: layout.bytes(ofSlice: index).count)
            {
                present.insert(index)
                report.keptSlices += 1
            } else if type == .directory {
                try removeTree(filePath)
                report.droppedFiles += 1
            } else {
                try FileSystem.unlink(filePath)
                report.droppedFiles += 1
            }
        }
        return Entry(meta: meta, versionTag: tag, present: present)
    }

    /// `TAG-INDEX` with this version's tag and a decimal index (no sign, no leading zeros); nil otherwise.
    static func sliceIndex(_ file: String, tag: String) -> Int? {
        guard file.hasPrefix(tag + "-") else { return nil }
        let digits = file.dropFirst(tag.count + 1)
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy(\.isASCIIDigit),
            digits == "0" || !digits.hasPrefix("0")
        else { return nil }
        return Int(digits)
    }

    /// Removes a directory the store does not recognise, one level deep (the store makes no deeper ones).
    private static func removeTree(_ path: String) throws(CacheError) {
        for file in try FileSystem.entries(path) {
            let child = path + "/" + file
            if try FileSystem.fileType(child) == .directory {
                try removeTree(child)
            } else {
                try FileSystem.unlink(child)
            }
        }
        try FileSystem.removeDirectory(path)
    }
}
