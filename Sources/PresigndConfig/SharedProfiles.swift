import PresigndSigV4

/// The AWS shared files' profiles as a credential source: `~/.aws/credentials` and `~/.aws/config` (or
/// `AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`), a profile's keys merged with the credentials file winning,
/// read the way the AWS CLI reads them ("Configuration and credential file settings", AWS CLI User Guide).
struct SharedProfiles {
    var profiles: [String: [String: String]]
    /// The files looked at, for messages.
    var paths: String

    /// Missing or unreadable files count as empty (the chain then moves on, as the SDKs do). `credentialsFile`
    /// (an upstream's `credentials_file`) replaces the credentials file's default location.
    static func load(environment: [String: String], credentialsFile: String? = nil) -> SharedProfiles {
        let home = nonEmpty(environment["HOME"])
        let credentials =
            credentialsFile ?? nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"])
            ?? home.map { $0 + "/.aws/credentials" }
        let config = nonEmpty(environment["AWS_CONFIG_FILE"]) ?? home.map { $0 + "/.aws/config" }
        var merged: [String: [String: String]] = [:]
        for path in [config, credentials].compactMap({ $0 }) {
            guard case .success(let text) = FileReader.read(path, limit: ByteSize.mebibyte) else { continue }
            for (name, keys) in SharedCredentialsFile(text: text).profiles {
                merged[name, default: [:]].merge(keys) { _, later in later }
            }
        }
        return SharedProfiles(
            profiles: merged, paths: [credentials, config].compactMap { $0 }.joined(separator: " or "))
    }

    /// What profile `name` configures, in the CLI's order: `role_arn` (with `web_identity_token_file`,
    /// `source_profile` or `credential_source`), keys, `credential_process`; nil when it configures none of them.
    func resolve(
        _ name: String, environment: [String: String], sts: STSEndpoint, caFile: String?, depth: Int = 0
    ) -> Result<RefreshingCredentialSource?, AddressSyntaxError> {
        guard depth < 5 else { return .failure(.init("source_profile chains more than 5 profiles deep")) }
        guard let keys = profiles[name] else { return .success(nil) }
        let staticKeys = nonEmpty(keys["aws_access_key_id"]).flatMap { id in
            nonEmpty(keys["aws_secret_access_key"]).map { secret in
                UpstreamCredentials(
                    accessKeyID: id, secretAccessKey: Secret(secret),
                    sessionToken: nonEmpty(keys["aws_session_token"]).map(Secret.init), source: "profile \(name)")
            }
        }
        guard let arn = nonEmpty(keys["role_arn"]) else {
            if let staticKeys { return .success(.staticKeys(staticKeys)) }
            if let command = nonEmpty(keys["credential_process"]) {
                guard let words = CredentialProcessConfig.split(command), let program = words.first,
                    let located = CredentialProcessConfig.locate(program, configPath: "/", environment: environment)
                else {
                    return .failure(.init("its credential_process does not name an executable program"))
                }
                return .success(.process(CredentialProcessConfig(arguments: [located] + words.dropFirst())))
            }
            return .success(nil)
        }
        var profileSTS = sts
        if let region = nonEmpty(keys["region"]), nonEmpty(environment["AWS_ENDPOINT_URL_STS"]) == nil,
            profileSTS.endpoint == STSEndpoint.regional(profileSTS.region)
        {
            profileSTS.region = region
            profileSTS.endpoint = STSEndpoint.regional(region)
        }
        let sessionName = nonEmpty(keys["role_session_name"]) ?? STSEndpoint.defaultSessionName
        let duration = nonEmpty(keys["duration_seconds"]).flatMap { Int($0) } ?? STSEndpoint.defaultDurationSeconds
        guard STSEndpoint.isRoleARN(arn), STSEndpoint.isSessionName(sessionName), (900...43200).contains(duration)
        else {
            return .failure(.init("role_arn, role_session_name or duration_seconds is malformed"))
        }
        if let tokenFile = nonEmpty(keys["web_identity_token_file"]) {
            return .success(
                .webIdentity(
                    WebIdentityConfig(
                        tokenFile: tokenFile, roleARN: arn, sessionName: sessionName, durationSeconds: duration,
                        sts: profileSTS)))
        }
        let source: RefreshingCredentialSource
        if let sourceProfile = nonEmpty(keys["source_profile"]) {
            if sourceProfile == name {
                guard let staticKeys else { return .failure(.init("source_profile names itself but it has no keys")) }
                source = .staticKeys(staticKeys)
            } else {
                switch resolve(sourceProfile, environment: environment, sts: sts, caFile: caFile, depth: depth + 1) {
                case .failure(let error): return .failure(error)
                case .success(nil): return .failure(.init("source_profile '\(sourceProfile)' has no credentials"))
                case .success(let found?): source = found
                }
            }
        } else if let kind = nonEmpty(keys["credential_source"]) {
            let names = ["Environment": "environment", "Ec2InstanceMetadata": "imds", "EcsContainer": "container"]
            guard let mapped = names[kind] else {
                return .failure(
                    .init("credential_source '\(kind)' is not Environment, Ec2InstanceMetadata or EcsContainer"))
            }
            if mapped == "environment" {
                guard let id = nonEmpty(environment["AWS_ACCESS_KEY_ID"]),
                    let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"])
                else { return .failure(.init("credential_source = Environment, but AWS_ACCESS_KEY_ID is not set")) }
                source = .staticKeys(
                    UpstreamCredentials(
                        accessKeyID: id, secretAccessKey: Secret(secret),
                        sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"]).map(Secret.init),
                        source: "environment"))
            } else {
                switch RefreshingCredentialSource.fromEnvironment(
                    mapped, environment: environment, sts: sts, caFile: caFile)
                {
                case .failure(let error): return .failure(error)
                case .success(let found): source = found
                }
            }
        } else {
            return .failure(.init("role_arn needs source_profile, credential_source or web_identity_token_file"))
        }
        return .success(
            .assumeRole(
                AssumeRoleConfig(
                    roleARN: arn, sessionName: sessionName, externalID: nonEmpty(keys["external_id"]).map(Secret.init),
                    durationSeconds: duration, sts: profileSTS, source: source)))
    }
}
