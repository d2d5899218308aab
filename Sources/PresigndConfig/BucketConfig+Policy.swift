import PresigndPolicy

/// Reading a bucket's `allowed_actions`, `denied_actions` and `allow` (issue 19).
extension BucketConfig {
    /// IAM action patterns; a pattern that names no action presignd knows is an error (a typo must not
    /// silently grant or deny nothing).
    static func actions(_ key: String, _ reader: TableReader) -> [ActionPattern] {
        var patterns: [ActionPattern] = []
        for text in reader.strings(key) ?? [] {
            guard let pattern = ActionPattern(text.value) else {
                reader.diagnostics.error(
                    "invalid action '\(text.value)' in \(key); expected an IAM action such as \"s3:PutBucketPolicy\" "
                        + "or a pattern such as \"s3:Get*\"", at: text.position)
                continue
            }
            guard !pattern.knownMatches.isEmpty else {
                let known = OperationTable.actions.sorted()
                reader.diagnostics.error(
                    "\(key) entry '\(text.value)' names no S3 action presignd knows"
                        + Suggestion.hint(for: text.value, in: known), at: text.position)
                continue
            }
            patterns.append(pattern)
        }
        return patterns
    }

    /// `allow` entries: `uid:N`, `gid:N` or `gid:NAME` (resolved now), `cidr:RANGE`, `unix:any`, `tcp:any`,
    /// `token:NAME`.
    static func principals(_ reader: TableReader, tokenNames: [String]) -> [PrincipalPattern] {
        var patterns: [PrincipalPattern] = []
        for text in reader.strings("allow") ?? [] {
            let parts = text.value.split(separator: ":", maxSplits: 1)
            let kind = parts.first.map(String.init) ?? ""
            let value = parts.count == 2 ? String(parts[1]) : ""
            var pattern: PrincipalPattern? = nil
            switch kind {
            case "uid": pattern = UInt32(value).map(PrincipalPattern.uid)
            case "gid": pattern = SystemAccounts.groupID(value).map(PrincipalPattern.gid)
            case "cidr": pattern = CIDR(value).map(PrincipalPattern.cidr)
            case "unix" where value == "any": pattern = .unixAny
            case "tcp" where value == "any": pattern = .tcpAny
            case "token" where !value.isEmpty: pattern = .token(value)
            default: break
            }
            if case .token(let name) = pattern, !tokenNames.contains(name) {
                reader.diagnostics.error(
                    "allow entry '\(text.value)' names no [token.\(name)]"
                        + Suggestion.hint(for: name, in: tokenNames), at: text.position)
                continue
            }
            guard let pattern else {
                reader.diagnostics.error(
                    "invalid allow entry '\(text.value)'; expected uid:1000, gid:NAME or gid:100 (a group that "
                        + "exists), cidr:10.0.0.0/8, unix:any, tcp:any or token:NAME", at: text.position)
                continue
            }
            patterns.append(pattern)
        }
        return patterns
    }
}
