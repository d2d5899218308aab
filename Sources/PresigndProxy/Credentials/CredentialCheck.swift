import PresigndConfig

#if canImport(Glibc)
    import Glibc
#endif

/// `presignd credentials`: one fetch from an upstream's credential source, described without secrets.
public enum CredentialCheck {
    /// What a fetch found: the provider, the key id's last four characters, the expiry (nil: none).
    public struct Report: Sendable, Equatable {
        public var provider: String
        public var source: String
        public var keyHint: String
        public var expiresAt: String?
    }

    /// Fetches once (runs the process, or asks the endpoint) on the calling thread; static keys need no fetch.
    public static func fetchOnce(_ upstream: UpstreamConfig) -> Result<Report, CredentialFetchError> {
        // An HTTPS fetch writes through OpenSSL with write(2): a peer that resets must not kill the command.
        signal(SIGPIPE, SIG_IGN)
        let provider: any CredentialProvider
        let source: String
        if let refreshing = upstream.refreshingCredentials {
            provider = CredentialRefreshers.provider(for: refreshing)
            source = refreshing.description
        } else {
            provider = StaticCredentialProvider(credentials: upstream.credentials.signing)
            source = upstream.credentials.source
        }
        return provider.fetch().result.map { fetched in
            Report(
                provider: provider.kind, source: source, keyHint: fetched.keyHint,
                expiresAt: fetched.expiresAtMilliseconds.map(CredentialRefreshStateMachine.iso))
        }
    }
}
