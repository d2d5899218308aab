import PresigndSigV4

/// Where presignd asks AWS STS for credentials, and how it signs and verifies that call.
public struct STSEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// `sts_endpoint`, else `AWS_ENDPOINT_URL_STS`, else the regional endpoint `https://sts.REGION.amazonaws.com`.
    public var endpoint: Endpoint
    /// The region the call is signed for (`sts_region`, else the upstream's AWS region, `AWS_REGION`,
    /// `AWS_DEFAULT_REGION`, `us-east-1`).
    public var region: String
    /// `credentials_ca_file`, else `AWS_CA_BUNDLE`: PEM bundle to verify HTTPS credential endpoints with instead
    /// of the system store.
    public var caFile: String?

    public init(endpoint: Endpoint, region: String, caFile: String? = nil) {
        self.endpoint = endpoint
        self.region = region
        self.caFile = caFile
    }

    public var description: String { "\(endpoint) (region \(region))" }
}

/// `credential_source = "assume_role"`: STS `AssumeRole` with keys from another provider (`source`).
public struct AssumeRoleConfig: Sendable, Hashable {
    /// `role_arn`.
    public var roleARN: String
    /// `role_session_name`: shows in CloudTrail. Default `presignd`.
    public var sessionName: String
    /// `external_id`, when the role's trust policy requires one (a secret only in the weak sense: never logged).
    public var externalID: Secret?
    /// `duration`: the session's lifetime asked for, 15 minutes to 12 hours. Default 1 hour.
    public var durationSeconds: Int
    public var sts: STSEndpoint
    /// Whose keys sign the `AssumeRole` call.
    public var source: RefreshingCredentialSource

    public init(
        roleARN: String, sessionName: String, externalID: Secret? = nil, durationSeconds: Int, sts: STSEndpoint,
        source: RefreshingCredentialSource
    ) {
        self.roleARN = roleARN
        self.sessionName = sessionName
        self.externalID = externalID
        self.durationSeconds = durationSeconds
        self.sts = sts
        self.source = source
    }
}

/// `credential_source = "web_identity"`: STS `AssumeRoleWithWebIdentity` with the OIDC token in a file (EKS IRSA
/// projects it and rotates it; it is read again on every refresh). The call is not signed.
public struct WebIdentityConfig: Sendable, Hashable {
    /// `web_identity_token_file`, else `AWS_WEB_IDENTITY_TOKEN_FILE`.
    public var tokenFile: String
    /// `role_arn`, else `AWS_ROLE_ARN`.
    public var roleARN: String
    /// `role_session_name`, else `AWS_ROLE_SESSION_NAME`, else `presignd`.
    public var sessionName: String
    public var durationSeconds: Int
    public var sts: STSEndpoint

    public init(tokenFile: String, roleARN: String, sessionName: String, durationSeconds: Int, sts: STSEndpoint) {
        self.tokenFile = tokenFile
        self.roleARN = roleARN
        self.sessionName = sessionName
        self.durationSeconds = durationSeconds
        self.sts = sts
    }
}

extension STSEndpoint {
    /// STS's own limits: `DurationSeconds` 900…43200, `RoleSessionName` `[\w+=,.@-]{2,64}`.
    static let durations = ConfigDuration.minutes(15)...ConfigDuration.hours(12)
    static let defaultDurationSeconds = 3600
    static let defaultSessionName = "presignd"

    static func isSessionName(_ text: String) -> Bool {
        (2...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                ASCIIClass.isAlphanumeric(byte) || "_+=,.@-".utf8.contains(byte)
            }
    }

    /// `arn:PARTITION:iam::ACCOUNT:role/NAME`, loosely: STS checks the rest.
    static func isRoleARN(_ text: String) -> Bool {
        text.hasPrefix("arn:") && text.contains(":role/") && (20...2048).contains(text.utf8.count)
    }

    /// The regional endpoint for `region` (the SDKs' default since 2024; `aws-global` is us-east-1).
    static func regional(_ region: String) -> Endpoint {
        Endpoint(scheme: .https, host: "sts.\(region).amazonaws.com")
    }
}

/// Byte classes for the names STS takes.
enum ASCIIClass {
    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }
}
