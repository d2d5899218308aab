import COpenSSL
import PresigndOpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// An OpenSSL client `SSL_CTX` for one upstream: TLS 1.2+, peer verification against the system
/// store or a configured CA file, and hostname (or IP) verification on every connection.
/// Shared read-only across workers (OpenSSL makes `SSL_new` on a shared context thread-safe).
final class TLSClientContext: @unchecked Sendable {
    let context: OpaquePointer
    let verifiesPeer: Bool

    init(caFile: String?, verifiesPeer: Bool) throws(StartupError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tls(OpenSSLError.drain("SSL_CTX_new").description)
        }
        self.context = context
        self.verifiesPeer = verifiesPeer
        presignd_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        presignd_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        // Client-side session cache: the new-session callback keeps the latest session per
        // worker and upstream (TLS 1.3 tickets arrive after the handshake; DESIGN §7).
        presignd_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SSL_CTX_sess_set_new_cb(context) { ssl, session in
            guard let ssl, let session, let store = TLSSessionStore.from(ssl) else { return 0 }
            store.replace(with: session)
            return 1  // we keep the reference
        }
        if verifiesPeer {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            if let caFile {
                guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                    throw .tls(OpenSSLError.drain("cannot load ca_file \(caFile)").description)
                }
            } else {
                guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                    throw .tls(OpenSSLError.drain("cannot load the system CA store").description)
                }
            }
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A new `SSL` for `host` with SNI (names only) and hostname or IP verification, resuming the
    /// store's session if there is one.
    func makeSSL(host: String, sessions: TLSSessionStore) -> OpaquePointer? {
        guard let ssl = SSL_new(context) else { return nil }
        let isIP = host.contains(":") || host.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || $0 == 46 }
        if verifiesPeer {
            if isIP {
                let param = SSL_get0_param(ssl)
                X509_VERIFY_PARAM_set1_ip_asc(param, host)
            } else {
                SSL_set1_host(ssl, host)
            }
        }
        if !isIP {
            presignd_SSL_set_tlsext_host_name(ssl, host)
        }
        SSL_set_ex_data(ssl, TLSSessionStore.exDataIndex, Unmanaged.passUnretained(sessions).toOpaque())
        if let session = sessions.session {
            SSL_set_session(ssl, session)
        }
        return ssl
    }
}

/// The latest TLS session for one upstream on one worker, for resumption.
final class TLSSessionStore {
    fileprivate(set) var session: OpaquePointer?

    static let exDataIndex: Int32 = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nil, nil, nil, nil)

    static func from(_ ssl: OpaquePointer) -> TLSSessionStore? {
        guard let raw = SSL_get_ex_data(ssl, exDataIndex) else { return nil }
        return Unmanaged<TLSSessionStore>.fromOpaque(raw).takeUnretainedValue()
    }

    func replace(with newSession: OpaquePointer) {
        if let session { SSL_SESSION_free(session) }
        session = newSession
    }

    func forget() {
        if let session { SSL_SESSION_free(session) }
        session = nil
    }

    deinit { forget() }
}
