import PresigndHTTP1
import PresigndPolicy

/// Reading one `[[bucket]]`: name, upstream reference, mount and policy.
extension BucketConfig {
    static let keys = [
        "name", "upstream", "mount", "access", "allowed_prefixes", "allowed_methods", "max_upload_size", "redirect",
        "redirect_expires", "max_presign_expiry", "plus_in_path_is_space", "allowed_actions", "denied_actions", "allow",
        "cache",
    ]

    static let methods = ["GET", "HEAD", "PUT", "POST", "DELETE"]

    /// Nil when `name` or the upstream is unusable. `upstreamNames` are every `[upstream.NAME]` written, even
    /// broken ones, so a mistake inside an upstream is not reported again by each of its buckets.
    static func decode(
        _ reader: TableReader, upstreamNames: [String], tokenNames: [String] = [], configPath: String = ""
    ) -> Located<BucketConfig>? {
        let diagnostics = reader.diagnostics
        defer { reader.reportUnknownKeys() }
        let name = reader.string("name")
        if let name, !isBucketName(name.value) {
            diagnostics.error(
                "invalid bucket name '\(name.value)'; expected 1 to 255 letters, digits, '.', '-' or '_'",
                at: name.position)
        } else if name == nil && !reader.contains("name") {
            diagnostics.error("[[bucket]] needs a name (the bucket's name upstream)", at: reader.table.position)
        }
        var upstream = reader.string("upstream")?.value
        if let written = reader.string("upstream"), !upstreamNames.contains(written.value) {
            diagnostics.error(
                "unknown upstream '\(written.value)'; "
                    + (upstreamNames.isEmpty
                        ? "no [upstream.NAME] table is defined"
                        : "defined: \(upstreamNames.joined(separator: ", "))"
                            + Suggestion.hint(for: written.value, in: upstreamNames)),
                at: written.position)
            upstream = nil
        } else if upstream == nil && !reader.contains("upstream") {
            if upstreamNames.count == 1 {
                upstream = upstreamNames[0]
            } else {
                diagnostics.error(
                    upstreamNames.isEmpty
                        ? "[[bucket]] needs an upstream, and no [upstream.NAME] table is defined"
                        : "[[bucket]] needs upstream = one of: \(upstreamNames.joined(separator: ", "))",
                    at: reader.table.position)
            }
        }
        guard let name, isBucketName(name.value), let upstream else { return nil }
        var bucket = BucketConfig(name: name.value, upstream: upstream)
        if let mount = reader.string("mount") {
            if let problem = mountProblem(mount.value) {
                diagnostics.error("invalid mount '\(mount.value)': \(problem)", at: mount.position)
            }
            bucket.mount = mount.value
        }
        if let access = reader.choice("access", as: Access.self) { bucket.access = access }
        for prefix in reader.strings("allowed_prefixes") ?? [] {
            if prefix.value.isEmpty || prefix.value.hasPrefix("/") {
                diagnostics.error(
                    "allowed_prefixes entries are object key prefixes such as \"public/\" (not empty, no leading '/')",
                    at: prefix.position)
            }
            bucket.allowedPrefixes.append(prefix.value)
        }
        for method in reader.strings("allowed_methods") ?? [] {
            let upper = ASCII.uppercased(method.value)
            if !methods.contains(upper) {
                diagnostics.error(
                    "unsupported method '\(method.value)' in allowed_methods; expected: \(methods.joined(separator: ", "))",
                    at: method.position)
            } else if !bucket.permittedMethods.contains(upper) {
                diagnostics.error(
                    "method \(upper) is not allowed with access = \"\(bucket.access.rawValue)\"; set access = "
                        + "\"read-write\"", at: method.position)
            } else if !bucket.allowedMethods.contains(upper) {
                bucket.allowedMethods.append(upper)
            }
        }
        bucket.allowedActions = actions("allowed_actions", reader)
        bucket.deniedActions = actions("denied_actions", reader)
        bucket.allow = principals(reader, tokenNames: tokenNames)
        if let size = reader.size("max_upload_size", in: 1...(5 << 40)) { bucket.maxUploadSize = size }
        if let redirect = reader.boolean("redirect") { bucket.redirect = redirect }
        let expiries = ConfigDuration.seconds(1)...ConfigDuration.days(7)  // SigV4 presign: 1 s to 7 days
        if let value = reader.duration("max_presign_expiry", in: expiries) { bucket.maxPresignExpiry = value }
        if let value = reader.duration("redirect_expires", in: expiries) {
            bucket.redirectExpires = value
            if value > bucket.maxPresignExpiry {
                diagnostics.error(
                    "redirect_expires must not exceed max_presign_expiry", at: reader.keyPosition("redirect_expires"))
            }
        }
        if let value = reader.boolean("plus_in_path_is_space") { bucket.plusInPathIsSpace = value }
        if let table = reader.table("cache") {
            let cacheReader = reader.reader(for: table, context: "[bucket.cache]", knownKeys: CacheConfig.keys)
            bucket.cache = CacheConfig.decode(cacheReader, configPath: configPath)
        }
        return Located(value: bucket, position: reader.table.position)
    }

    /// Why a mount path is unusable, or nil: `/` or `/a/b`, no trailing slash, no empty, `.` or `..` segments.
    static func mountProblem(_ mount: String) -> String? {
        guard mount.hasPrefix("/") else { return "a mount must start with '/'" }
        if mount == "/" { return nil }
        guard !mount.hasSuffix("/") else { return "a mount must not end with '/' (except \"/\" itself)" }
        let segments = mount.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            return "a mount must not contain empty, '.' or '..' segments"
        }
        guard !mount.contains(where: { $0 == "?" || $0 == "#" || $0 == "%" || $0 == " " }) else {
            return "a mount must not contain '?', '#', '%' or spaces"
        }
        return nil
    }

    static func isBucketName(_ name: String) -> Bool {
        (1...255).contains(name.utf8.count)
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }
    }
}
