import PresigndConfig
import PresigndSigV4

/// STS `AssumeRole`: the source provider's keys (fetched afresh each time: they may be temporary themselves) sign
/// the call; the role's session credentials come back with their expiry.
struct AssumeRoleProvider: CredentialProvider {
    var config: AssumeRoleConfig
    var source: any CredentialProvider
    var kind: String { "assume_role" }

    func fetch() -> CredentialFetchOutcome {
        let sourceOutcome = source.fetch()
        let keys: Credentials
        switch sourceOutcome.result {
        case .failure(let error):
            return CredentialFetchOutcome(
                result: .failure(CredentialFetchError("the source (\(source.kind)) of the role: \(error.message)")),
                logLines: sourceOutcome.logLines)
        case .success(let fetched): keys = fetched.credentials
        }
        var parameters = [
            ("RoleArn", config.roleARN), ("RoleSessionName", config.sessionName),
            ("DurationSeconds", String(config.durationSeconds)),
        ]
        if let external = config.externalID { parameters.append(("ExternalId", external.exposedValue)) }
        let result = STSClient.call(action: "AssumeRole", parameters: parameters, sts: config.sts, credentials: keys)
        return CredentialFetchOutcome(
            result: result.mapError { CredentialFetchError("\($0.message) (role \(config.roleARN))") },
            logLines: sourceOutcome.logLines)
    }
}

/// STS `AssumeRoleWithWebIdentity`: the token file is read on every fetch (EKS IRSA rotates it); the call is not
/// signed (the token is the proof).
struct WebIdentityProvider: CredentialProvider {
    var config: WebIdentityConfig
    var kind: String { "web_identity" }

    func fetch() -> CredentialFetchOutcome {
        let token: String
        switch FileReader.readToken(config.tokenFile) {
        case .failure(let error):
            return CredentialFetchOutcome(
                result: .failure(
                    CredentialFetchError("cannot read the web identity token file \(config.tokenFile): \(error.reason)")
                ))
        case .success(let text):
            token = text
        }
        guard !token.isEmpty else {
            return CredentialFetchOutcome(
                result: .failure(CredentialFetchError("the web identity token file \(config.tokenFile) is empty")))
        }
        let parameters = [
            ("RoleArn", config.roleARN), ("RoleSessionName", config.sessionName), ("WebIdentityToken", token),
            ("DurationSeconds", String(config.durationSeconds)),
        ]
        let result = STSClient.call(
            action: "AssumeRoleWithWebIdentity", parameters: parameters, sts: config.sts, credentials: nil)
        return CredentialFetchOutcome(
            result: result.mapError { CredentialFetchError("\($0.message) (role \(config.roleARN))") })
    }
}

/// The SDKs' chain: the link resolved at load (`CredentialChain`) fetches; its kind says which link won
/// (`chain:container`; a profile as `chain:profile`, a label without the profile's name).
struct ChainProvider: CredentialProvider {
    var chain: CredentialChain
    var provider: any CredentialProvider
    var kind: String { "chain:" + (chain.winner.split(separator: " ").first.map(String.init) ?? chain.winner) }

    func fetch() -> CredentialFetchOutcome {
        var outcome = provider.fetch()
        outcome.result = outcome.result.mapError { CredentialFetchError("chain (\(chain.winner)): \($0.message)") }
        return outcome
    }
}
