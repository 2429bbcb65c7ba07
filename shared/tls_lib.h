/* OpenSSL's functions that --key uses (shared/wire_tls.c), as one table.
 *
 * Native builds load libcrypto.so.3 and libssl.so.3 with dlopen the first
 * time a key is loaded, so that a tracer run without --key maps no OpenSSL
 * at all: linked in, its relocated .data.rel.ro alone cost ~380 KiB of the
 * tracer's RSS at every start (README, "Symbolizer memory").  Builds that
 * link OpenSSL statically (MT_TLS_STATIC: the cross builds, whose board
 * binary stays self-contained) fill the same table with the functions'
 * own addresses.  Not built with MT_NO_TLS. */
#ifndef MT_SHARED_TLS_LIB_H
#define MT_SHARED_TLS_LIB_H

#ifndef MT_NO_TLS
#include <stddef.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

/* X(library, function): every function wire_tls.c calls, with the library
 * that defines it (crypto: libcrypto.so.3, ssl: libssl.so.3). */
#define TLS_LIB_FUNCTIONS(X)                                                                      \
    X(crypto, EVP_Digest)                                                                         \
    X(crypto, EVP_sha256)                                                                         \
    X(crypto, OPENSSL_cleanse)                                                                    \
    X(crypto, ERR_get_error)                                                                      \
    X(crypto, ERR_reason_error_string)                                                            \
    X(crypto, ERR_clear_error)                                                                    \
    X(ssl, TLS_server_method)                                                                     \
    X(ssl, TLS_client_method)                                                                     \
    X(ssl, SSL_CTX_new)                                                                           \
    X(ssl, SSL_CTX_free)                                                                          \
    X(ssl, SSL_CTX_ctrl)                                                                          \
    X(ssl, SSL_CTX_set_options)                                                                   \
    X(ssl, SSL_CTX_set_num_tickets)                                                               \
    X(ssl, SSL_CTX_set_psk_server_callback)                                                       \
    X(ssl, SSL_CTX_set_psk_client_callback)                                                       \
    X(ssl, SSL_new)                                                                               \
    X(ssl, SSL_free)                                                                              \
    X(ssl, SSL_set_fd)                                                                            \
    X(ssl, SSL_accept)                                                                            \
    X(ssl, SSL_connect)                                                                           \
    X(ssl, SSL_get_error)                                                                         \
    X(ssl, SSL_read)                                                                              \
    X(ssl, SSL_write)                                                                             \
    X(ssl, SSL_pending)                                                                           \
    X(ssl, SSL_shutdown)

/* One pointer per function, typed by OpenSSL's own declaration. */
struct tls_lib {
#define TLS_LIB_FIELD(lib, fn) __typeof__(fn) *fn;
    TLS_LIB_FUNCTIONS(TLS_LIB_FIELD)
#undef TLS_LIB_FIELD
};

/* The table, loaded once (thread-safe); later calls return the same
 * answer.  NULL with a one-line err naming the library and dlerror's
 * reason when OpenSSL cannot be loaded. */
const struct tls_lib *tls_lib_get(char *err, size_t errlen);

#endif /* MT_NO_TLS */
#endif
