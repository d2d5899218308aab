import PresigndPolicy

/// Least privilege, automatically: an `r2_temporary` upstream's key is scoped to its bucket's own policy.
extension R2CredentialScope {
    /// The write methods; `allowed_methods` without any of them makes a read-write bucket read-only.
    static let writeMethods: Set<String> = ["PUT", "POST", "DELETE"]

    /// The narrowest preset that covers what `bucket` grants: `object-read-only` when it grants no object write
    /// (after `allowed_methods` and `denied_actions`), `object-read-write` otherwise; its `allowed_prefixes` as
    /// prefix paths. A bucket granting bucket configuration actions (`allowed_actions = ["s3:PutBucketCors"]`)
    /// is refused: the only presets that cover them (`admin-*`) reach every setting of the bucket, far wider than
    /// the one action granted, and an object scope would make the granted action fail at R2.
    public static func derive(for bucket: BucketConfig) -> Result<R2CredentialScope, ScopeError> {
        let level: AccessLevel = bucket.access == .readOnly ? .readOnly : .readWrite
        func denied(_ action: String) -> Bool { bucket.deniedActions.contains { $0.matches(action) } }
        let reads = Set(AccessLevel.readActions)
        let writes = Set(AccessLevel.writeActions)
        let granted = reads.union(level == .readWrite ? writes : []).union(
            bucket.allowedActions.flatMap(\.knownMatches)
        )
        .filter { !denied($0) }
        let objectActions = reads.union(writes)
        let configuration = granted.subtracting(objectActions).sorted()
        if !configuration.isEmpty {
            return .failure(
                ScopeError(
                    message: "bucket '\(bucket.name)' grants bucket configuration actions ("
                        + configuration.joined(separator: ", ") + "); an R2 temporary credential covering them needs "
                        + "an admin-* scope, which reaches every setting of the bucket: remove them from "
                        + "allowed_actions, or give this upstream the parent's long-lived keys"))
        }
        let methodsWrite =
            bucket.allowedMethods.isEmpty || bucket.allowedMethods.contains { writeMethods.contains($0) }
        let grantsWrites = methodsWrite && !granted.isDisjoint(with: writes)
        return .success(
            R2CredentialScope(
                bucket: bucket.name, permission: grantsWrites ? .objectReadWrite : .objectReadOnly,
                prefixes: bucket.allowedPrefixes))
    }

    /// Why no scope fits a bucket.
    public struct ScopeError: Error, Equatable, Sendable {
        public var message: String
    }
}
