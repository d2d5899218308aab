import PresigndConfig
import PresigndSigV4

/// Which R2 temporary credentials presignd will mint for a configured bucket: never a scope wider than the
/// bucket's own policy in the configuration (issue 22 §3), never a lifetime over 7 days.
///
/// - The bucket must be configured, on an `r2` upstream with long-lived keys (no session token to mint from).
/// - Every method the permission grants must be one the bucket allows (`access`, `allowed_methods`): a
///   read-only bucket cannot mint read-write keys.
/// - `admin-*` scopes reach bucket configuration, which the proxy allows only on buckets without
///   `allowed_prefixes` (`AccessPolicy` restricts bucket-level requests there).
/// - With `allowed_prefixes`, the credential must be narrowed to prefixes or objects, each inside one of them.
public enum R2CredentialPolicy {
    /// S3's longest key, bytes.
    static let maximumKeyBytes = 1024

    /// The minter for `request`'s bucket, or why not (`field` names the request field at fault).
    public static func minter(for request: R2CredentialRequest, configuration: Configuration)
        -> Result<R2CredentialMinter, PresignFailure>
    {
        guard let bucket = configuration.buckets.first(where: { $0.name == request.bucket }) else {
            let known = configuration.buckets.map(\.name).joined(separator: ", ")
            return .failure(
                PresignFailure(
                    status: 404, code: "NoSuchBucket", field: "bucket",
                    message: "bucket '\(request.bucket)' is not configured (have: \(known))"))
        }
        guard let upstream = configuration.upstreams[bucket.upstream], upstream.provider == .r2,
            let accountID = accountID(of: upstream.endpoint)
        else {
            return .failure(
                .invalid("bucket", "bucket '\(bucket.name)' is not on an R2 upstream; only R2 mints temporary keys"))
        }
        // An r2_temporary upstream keeps its parent's long-lived keys: they mint here as well.
        var parent = upstream.credentials.signing
        if case .r2Temporary(let config)? = upstream.refreshingCredentials {
            parent = config.parent.signing
        } else if upstream.refreshingCredentials != nil || upstream.credentials.sessionToken != nil {
            return .failure(
                .invalid(
                    "bucket",
                    "upstream '\(upstream.name)' has temporary credentials (a session token, credential_process or credential_source); "
                        + "minting needs the "
                        + "parent API token's long-lived keys"))
        }
        if let failure = check(request, bucket: bucket) { return .failure(failure) }
        let minter = R2CredentialMinter(parent: parent, accountID: accountID, audience: upstream.endpoint.hostHeader)
        return .success(minter)
    }

    /// The account id: the first label of `ACCOUNT[.JURISDICTION].r2.cloudflarestorage.com`.
    static func accountID(of endpoint: Endpoint) -> String? {
        guard let label = endpoint.host.split(separator: ".").first, !label.isEmpty else { return nil }
        return String(label)
    }

    /// The scope checks against the bucket's policy; nil when the request is inside it.
    static func check(_ request: R2CredentialRequest, bucket: BucketConfig) -> PresignFailure? {
        guard (1...R2CredentialRequest.maximumTTL).contains(request.ttlSeconds) else {
            return .invalid("ttl", "ttl must be 1 second to 7 days (604800 s), got \(request.ttlSeconds) s")
        }
        let allowed = bucket.permittedMethods.filter {
            bucket.allowedMethods.isEmpty || bucket.allowedMethods.contains($0)
        }
        if let method = request.permission.methods.first(where: { !allowed.contains($0) }) {
            let why =
                bucket.access == .readOnly && method != "GET" && method != "HEAD"
                ? "bucket '\(bucket.name)' is read-only" : "method \(method) is not allowed on bucket '\(bucket.name)'"
            return .denied("permission", "\(request.permission.rawValue) is wider than the bucket's policy: \(why)")
        }
        if request.permission.isAdmin && !bucket.allowedPrefixes.isEmpty {
            return .denied(
                "permission",
                "\(request.permission.rawValue) reaches bucket configuration, but bucket '\(bucket.name)' is limited "
                    + "to allowed_prefixes")
        }
        if request.prefixes.contains(where: \.isEmpty) {
            return .invalid("prefixes", "an empty prefix is the whole bucket: omit --prefix instead")
        }
        if request.objects.contains(where: { $0.isEmpty || $0.utf8.count > maximumKeyBytes }) {
            return .invalid("objects", "an object key must be 1 to \(maximumKeyBytes) bytes")
        }
        guard !bucket.allowedPrefixes.isEmpty else { return nil }
        if request.prefixes.isEmpty && request.objects.isEmpty {
            return .denied(
                "prefixes",
                "bucket '\(bucket.name)' is limited to allowed_prefixes (\(bucket.allowedPrefixes.joined(separator: ", ")))"
                    + ": name prefixes or objects inside them")
        }
        func inside(_ path: String) -> Bool { bucket.allowedPrefixes.contains { path.hasPrefixBytes($0) } }
        if let outside = request.prefixes.first(where: { !inside($0) }) {
            return .denied("prefixes", "prefix '\(outside)' is outside allowed_prefixes of bucket '\(bucket.name)'")
        }
        if let outside = request.objects.first(where: { !inside($0) }) {
            return .denied("objects", "object '\(outside)' is outside allowed_prefixes of bucket '\(bucket.name)'")
        }
        return nil
    }
}

extension R2CredentialPolicy {
    /// The whole mint, for `presignd mint` and `POST /v1/credentials`: the scope checked against the bucket's
    /// policy, then the credential derived at `now` for the bucket's R2 endpoint.
    public static func mint(_ request: R2CredentialRequest, configuration: Configuration, now: Int)
        -> Result<R2TemporaryCredentials, PresignFailure>
    {
        let minter: R2CredentialMinter
        switch Self.minter(for: request, configuration: configuration) {
        case .failure(let failure): return .failure(failure)
        case .success(let found): minter = found
        }
        let endpoint =
            configuration.buckets.first { $0.name == request.bucket }
            .flatMap { configuration.upstreams[$0.upstream] }.map(\.endpoint.description) ?? ""
        do {
            return .success(try minter.mint(request, now: now, endpoint: endpoint))
        } catch {
            return .failure(PresignFailure(status: 500, code: "InternalError", field: "", message: "minting failed"))
        }
    }
}

extension R2TemporaryCredentials {
    /// The AWS CLI's `credential_process` output, version 1: what `presignd mint --json` prints and the
    /// credentials API answers, so either can feed an SDK's `credential_process` directly.
    public var processJSON: String { JSONWriter.render(processJSONMembers) }

    var processJSONMembers: [(String, JSONWriter.Value)] {
        [
            ("Version", .int(1)), ("AccessKeyId", .string(accessKeyID)),
            ("SecretAccessKey", .string(secretAccessKey.exposedValue)),
            ("SessionToken", .string(sessionToken.exposedValue)),
            ("Expiration", .string(AmzDate(epochSeconds: expiresAt).iso8601)),
        ]
    }
}
