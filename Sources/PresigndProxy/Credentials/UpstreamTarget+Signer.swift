import PresigndSigV4

extension UpstreamTarget {
    /// The signer a worker uses for this upstream: with the configured keys, or, when the credentials are
    /// refreshed, with what the daemon last published (`fetched`). Without a signer, the reason requests get 503.
    func makeSigner(fetched: UpstreamCredentialState?) -> (signer: Signer?, problem: String?) {
        guard refreshesCredentials else {
            return (try? Signer(credentials: credentials, region: region, service: "s3"), nil)
        }
        switch fetched {
        case .valid(let credentials, _)?:
            return (try? Signer(credentials: credentials, region: region, service: "s3"), nil)
        case .unavailable(let reason)?:
            return (nil, reason)
        case nil:
            return (nil, "its credentials have not been fetched yet")
        }
    }
}
