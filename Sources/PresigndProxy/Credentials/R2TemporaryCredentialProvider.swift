import PresigndConfig
import PresigndSigV4

/// `credential_source = "r2_temporary"`: each fetch mints a new R2 temporary credential from the parent keys,
/// scoped to the upstream's bucket (`R2CredentialScope`), valid for `r2_temporary_ttl`. Minting is a local
/// computation, but it goes through the same `CredentialRefresher` as every other source: one refresh path,
/// ahead of expiry, published to the workers without a request ever waiting on it.
struct R2TemporaryCredentialProvider: CredentialProvider {
    var config: R2TemporaryCredentialConfig
    var kind: String { "r2_temporary" }

    func fetch() -> CredentialFetchOutcome {
        CredentialFetchOutcome(result: mint(now: CredentialRefresher.wallClockMilliseconds() / 1000))
    }

    /// The credential issued at `now` (epoch seconds), as the signer takes it, with its expiry.
    func mint(now: Int) -> Result<FetchedCredentials, CredentialFetchError> {
        minted(now: now).map { minted in
            FetchedCredentials(
                credentials: Credentials(
                    accessKeyID: minted.accessKeyID, secretAccessKey: minted.secretAccessKey,
                    sessionToken: minted.sessionToken),
                expiresAtMilliseconds: minted.expiresAt * 1000)
        }
    }

    /// The whole minted credential (with its JWT), for tests and `presignd presign`.
    func minted(now: Int) -> Result<R2TemporaryCredentials, CredentialFetchError> {
        guard let scope = config.scope else {
            // The loader derives the scope or refuses the configuration; this is a programmer's error path.
            return .failure(CredentialFetchError("no bucket to scope the R2 temporary credential to"))
        }
        var request = R2CredentialRequest(
            bucket: scope.bucket, permission: scope.permission, ttlSeconds: config.ttlSeconds)
        request.prefixes = scope.prefixes
        let minter = R2CredentialMinter(
            parent: config.parent.signing, accountID: config.accountID, audience: config.audience)
        do {
            return .success(try minter.mint(request, now: now, endpoint: ""))
        } catch {
            return .failure(CredentialFetchError("minting the R2 temporary credential failed (HMAC-SHA256)"))
        }
    }
}

extension PresignService {
    /// For the command line (`presignd presign --config`): credentials minted at `now` (epoch seconds) for the
    /// upstreams whose keys presignd mints itself (`r2_temporary`), so a link is signed as the running daemon
    /// would sign it: with a scoped key and its session token. Sources that need a fetch stay unfetched.
    public func mintLocalCredentials(_ configuration: Configuration, now: Int) -> Result<Void, CredentialFetchError> {
        for (name, upstream) in configuration.upstreams {
            guard case .r2Temporary(let config)? = upstream.refreshingCredentials else { continue }
            switch R2TemporaryCredentialProvider(config: config).mint(now: now) {
            case .success(let fetched):
                fetchedCredentials[name] = .valid(
                    fetched.credentials, expiresAtMilliseconds: fetched.expiresAtMilliseconds)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(())
    }
}

extension R2TemporaryCredentialConfig {
    /// One credential minted at `now` (epoch seconds), for the command line's `sign` and `presign`.
    public func mint(now: Int) -> Result<Credentials, CredentialFetchError> {
        R2TemporaryCredentialProvider(config: self).mint(now: now).map(\.credentials)
    }
}
