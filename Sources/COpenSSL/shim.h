#ifndef PRESIGND_COPENSSL_SHIM_H
#define PRESIGND_COPENSSL_SHIM_H
#include <sys/types.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

// Macros Swift cannot call: static inline shims (DESIGN §7).
static inline long presignd_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long presignd_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long presignd_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long presignd_SSL_set_mode(SSL *ssl, long mode) {
    return SSL_set_mode(ssl, mode);
}
static inline long presignd_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

// SHA-256 through the low-level API: a plain `SHA256_CTX` value that is copied by assignment (HMAC keeps its
// ipad/opad states and copies them per signature) and no EVP dispatch. OpenSSL 3 deprecates these functions
// but still ships them, and they take the same SHA-NI/AVX2 block functions as EVP. The deprecation warning is
// silenced here only, so it cannot leak into Swift (the build uses -warnings-as-errors).
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline int presignd_sha256_init(SHA256_CTX *ctx) {
    return SHA256_Init(ctx);
}
static inline int presignd_sha256_update(SHA256_CTX *ctx, const void *data, size_t length) {
    return SHA256_Update(ctx, data, length);
}
static inline int presignd_sha256_final(unsigned char *digest, SHA256_CTX *ctx) {
    return SHA256_Final(digest, ctx);
}
#pragma clang diagnostic pop
#endif
